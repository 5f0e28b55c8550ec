/**
 * The ext-proc stage's settings, named after Envoy's `ExternalProcessor` filter config: the flags that set them,
 * and one builder that turns flag values into a frozen `ExtProcSettings` — refusing at start-up, with a clear
 * error, any setting the proxy cannot honour (a body mode other than NONE/BUFFERED, trailer modes, an unknown
 * attribute, an invalid regex, ...). `proxy/config.ts` spreads the flags into the proxy's and calls the builder.
 */
import { UsageError, type FlagSpecs } from '../../../lib/flags.js';
import { ORIGINAL_DST_NAMESPACE } from './metadata.js';
import { isSupportedAttribute, SUPPORTED_ATTRIBUTES } from './attributes.js';

export type HeaderMode = 'SEND' | 'SKIP';
export type BodyMode = 'NONE' | 'BUFFERED';

/** Envoy's `ProcessingMode`, restricted to what the proxy can do. */
export interface ProcessingMode {
  readonly requestHeaderMode: HeaderMode;
  readonly responseHeaderMode: HeaderMode;
  readonly requestBodyMode: BodyMode;
}

/** Envoy's `HeaderMutationRules` (`disallow_all` is not offered). */
export interface MutationRules {
  readonly allowAllRouting: boolean;
  readonly allowEnvoy: boolean;
  readonly disallowSystem: boolean;
  readonly disallowIsError: boolean;
  readonly allowExpression: RegExp | undefined;
  readonly disallowExpression: RegExp | undefined;
}

/** A header-name matcher of `forward_rules` (Envoy's StringMatcher: `exact`, or `prefix` written `name*`). */
export interface NameMatcher {
  readonly kind: 'exact' | 'prefix';
  readonly text: string;
}

/** Envoy's `ExtProcPerRoute`, keyed by a host suffix here (the proxy has no routes). */
export type HostOverride =
  | { readonly kind: 'disabled' }
  | { readonly kind: 'overrides'; readonly processingMode: Partial<ProcessingMode>; readonly failureModeAllow: boolean | undefined };

export interface ExtProcSettings {
  readonly failureModeAllow: boolean;
  readonly messageTimeoutMs: number;
  /** 0: `override_message_timeout` is ignored (Envoy's default). */
  readonly maxMessageTimeoutMs: number;
  readonly processingMode: ProcessingMode;
  readonly allowModeOverride: boolean;
  readonly requestAttributes: readonly string[];
  readonly forwardingNamespaces: readonly string[];
  /** Always includes `envoy.filters.listener.original_dst` (the route). */
  readonly receivingNamespaces: readonly string[];
  readonly mutationRules: MutationRules;
  readonly forwardRules: { readonly allowed: readonly NameMatcher[]; readonly disallowed: readonly NameMatcher[] };
  /** Most specific (longest) suffix first. */
  readonly perHost: readonly { readonly suffix: string; readonly override: HostOverride }[];
}

export const EXT_PROC_FLAGS = {
  'extproc-message-timeout-ms': {
    type: 'number',
    env: 'PROXY_EXTPROC_MESSAGE_TIMEOUT_MS',
    section: 'extProc',
    key: 'messageTimeoutMs',
    default: 10000,
    min: 1,
    help: 'message_timeout: how long to wait for each ext_proc answer (504 otherwise).',
  },
  'extproc-max-message-timeout-ms': {
    type: 'number',
    env: 'PROXY_EXTPROC_MAX_MESSAGE_TIMEOUT_MS',
    section: 'extProc',
    key: 'maxMessageTimeoutMs',
    default: 0,
    min: 0,
    max: 3_600_000,
    help: 'max_message_timeout: the longest override_message_timeout a processor may ask for (0: overrides are ignored).',
  },
  'extproc-processing-mode': {
    type: 'list',
    env: 'PROXY_EXTPROC_PROCESSING_MODE',
    section: 'extProc',
    key: 'processingMode',
    help: 'processing_mode as FIELD=VALUE pairs: request_header_mode=SEND|SKIP, response_header_mode=SEND|SKIP, request_body_mode=NONE|BUFFERED (response_body_mode=NONE and trailer modes SKIP only).',
  },
  'extproc-allow-mode-override': {
    type: 'boolean',
    env: 'PROXY_EXTPROC_ALLOW_MODE_OVERRIDE',
    section: 'extProc',
    key: 'allowModeOverride',
    default: false,
    help: 'allow_mode_override: honour a processor\'s mode_override on header answers.',
  },
  'failure-mode-allow': {
    type: 'boolean',
    env: 'PROXY_FAILURE_MODE_ALLOW',
    section: 'extProc',
    key: 'failureModeAllow',
    default: false,
    help: 'failure_mode_allow: on an ext_proc error or timeout continue unprocessed (the request then has no route: 503).',
  },
  'extproc-request-attributes': {
    type: 'list',
    env: 'PROXY_EXTPROC_REQUEST_ATTRIBUTES',
    section: 'extProc',
    key: 'requestAttributes',
    help: `request_attributes sent on the first message: ${SUPPORTED_ATTRIBUTES.join(', ')}.`,
  },
  'extproc-forwarding-namespaces': {
    type: 'list',
    env: 'PROXY_EXTPROC_FORWARDING_NAMESPACES',
    section: 'extProc',
    key: 'forwardingNamespaces',
    help: 'metadata_options.forwarding_namespaces.untyped: request metadata namespaces sent in metadata_context.',
  },
  'extproc-receiving-namespaces': {
    type: 'list',
    env: 'PROXY_EXTPROC_RECEIVING_NAMESPACES',
    section: 'extProc',
    key: 'receivingNamespaces',
    help: `metadata_options.receiving_namespaces.untyped: dynamic_metadata namespaces accepted from the processor (${ORIGINAL_DST_NAMESPACE} always).`,
  },
  'extproc-mutation-rules': {
    type: 'list',
    env: 'PROXY_EXTPROC_MUTATION_RULES',
    section: 'extProc',
    key: 'mutationRules',
    help: 'mutation_rules flags to turn on: allow_all_routing, allow_envoy, disallow_system, disallow_is_error.',
  },
  'extproc-mutation-allow-expression': {
    type: 'string?',
    env: 'PROXY_EXTPROC_MUTATION_ALLOW_EXPRESSION',
    section: 'extProc',
    key: 'mutationAllowExpression',
    help: 'mutation_rules.allow_expression: a regex of header names the processor may change.',
  },
  'extproc-mutation-disallow-expression': {
    type: 'string?',
    env: 'PROXY_EXTPROC_MUTATION_DISALLOW_EXPRESSION',
    section: 'extProc',
    key: 'mutationDisallowExpression',
    help: 'mutation_rules.disallow_expression: a regex of header names the processor may not change.',
  },
  'extproc-forward-allowed-headers': {
    type: 'list',
    env: 'PROXY_EXTPROC_FORWARD_ALLOWED_HEADERS',
    section: 'extProc',
    key: 'forwardAllowedHeaders',
    help: 'forward_rules.allowed_headers: only these request headers go to the processor (name, or prefix*).',
  },
  'extproc-forward-disallowed-headers': {
    type: 'list',
    env: 'PROXY_EXTPROC_FORWARD_DISALLOWED_HEADERS',
    section: 'extProc',
    key: 'forwardDisallowedHeaders',
    help: 'forward_rules.disallowed_headers: these request headers never go to the processor (name, or prefix*).',
  },
  'extproc-per-host': {
    type: 'list',
    env: 'PROXY_EXTPROC_PER_HOST',
    section: 'extProc',
    key: 'perHost',
    help: 'ExtProcPerRoute by host suffix: SUFFIX=disabled, or SUFFIX=FIELD:VALUE with a processing_mode field or failure_mode_allow (repeat for several).',
  },
} as const satisfies FlagSpecs;

/** The flag values the builder reads (`proxy/config.ts` passes its parsed flags). */
export interface ExtProcFlagValues {
  readonly 'extproc-message-timeout-ms': number;
  readonly 'extproc-max-message-timeout-ms': number;
  readonly 'extproc-processing-mode': readonly string[];
  readonly 'extproc-allow-mode-override': boolean;
  readonly 'failure-mode-allow': boolean;
  readonly 'extproc-request-attributes': readonly string[];
  readonly 'extproc-forwarding-namespaces': readonly string[];
  readonly 'extproc-receiving-namespaces': readonly string[];
  readonly 'extproc-mutation-rules': readonly string[];
  readonly 'extproc-mutation-allow-expression': string | undefined;
  readonly 'extproc-mutation-disallow-expression': string | undefined;
  readonly 'extproc-forward-allowed-headers': readonly string[];
  readonly 'extproc-forward-disallowed-headers': readonly string[];
  readonly 'extproc-per-host': readonly string[];
}

const HEADER_MODES: Readonly<Record<string, HeaderMode | undefined>> = { SEND: 'SEND', SKIP: 'SKIP', DEFAULT: 'SEND' };
const BODY_MODES: Readonly<Record<string, BodyMode | undefined>> = { NONE: 'NONE', BUFFERED: 'BUFFERED' };
/** Envoy body modes that exist but need streaming the proxy does not do. */
const UNSUPPORTED_BODY_MODES = new Set(['STREAMED', 'BUFFERED_PARTIAL', 'FULL_DUPLEX_STREAMED', 'GRPC']);
const MUTATION_FLAGS = new Set(['allow_all_routing', 'allow_envoy', 'disallow_system', 'disallow_is_error']);

/** One `processing_mode` field; throws a UsageError naming `where` for anything the proxy cannot honour. */
function modeField(field: string, value: string, where: string): Partial<ProcessingMode> {
  const v = value.trim().toUpperCase();
  switch (field) {
    case 'request_header_mode':
    case 'response_header_mode': {
      const mode = HEADER_MODES[v];
      if (mode === undefined) throw new UsageError(`${where}: ${field} must be SEND or SKIP, got "${value}"`);
      return field === 'request_header_mode' ? { requestHeaderMode: mode } : { responseHeaderMode: mode };
    }
    case 'request_body_mode': {
      const mode = BODY_MODES[v];
      if (mode !== undefined) return { requestBodyMode: mode };
      if (UNSUPPORTED_BODY_MODES.has(v)) throw new UsageError(`${where}: request_body_mode ${v} is not supported (NONE or BUFFERED)`);
      throw new UsageError(`${where}: request_body_mode must be NONE or BUFFERED, got "${value}"`);
    }
    case 'response_body_mode':
      if (v === 'NONE') return {};
      throw new UsageError(`${where}: response_body_mode ${v} is not supported (response bodies are never sent)`);
    case 'request_trailer_mode':
    case 'response_trailer_mode':
      if (v === 'SKIP' || v === 'DEFAULT') return {};
      throw new UsageError(`${where}: ${field} ${v} is not supported (trailers are never sent)`);
    default:
      throw new UsageError(`${where}: unknown processing_mode field "${field}"`);
  }
}

function pairs(entries: readonly string[], separator: string, where: string): [string, string][] {
  return entries.map((e) => {
    const at = e.indexOf(separator);
    if (at <= 0) throw new UsageError(`${where}: expected FIELD${separator}VALUE, got "${e}"`);
    return [e.slice(0, at).trim().toLowerCase(), e.slice(at + 1).trim()];
  });
}

function regex(text: string | undefined, where: string): RegExp | undefined {
  if (text === undefined || text === '') return undefined;
  try {
    return new RegExp(text);
  } catch (err) {
    throw new UsageError(`${where}: invalid regex: ${(err as Error).message}`);
  }
}

function matchers(names: readonly string[], where: string): NameMatcher[] {
  return names.map((n) => {
    const lower = n.toLowerCase();
    const prefix = lower.endsWith('*');
    const text = prefix ? lower.slice(0, -1) : lower;
    if (text === '' || !/^:?[!#$%&'*+\-.^_`|~0-9a-z]+$/.test(text)) throw new UsageError(`${where}: "${n}" is not a header name (or prefix*)`);
    return { kind: prefix ? 'prefix' : 'exact', text };
  });
}

function perHost(entries: readonly string[]): ExtProcSettings['perHost'] {
  const bySuffix = new Map<string, HostOverride>();
  for (const [suffix, setting] of pairs(entries, '=', '--extproc-per-host')) {
    const host = suffix.replace(/^\.+|\.+$/g, '');
    if (host === '') throw new UsageError(`--extproc-per-host: empty host suffix in "${suffix}=${setting}"`);
    const prev = bySuffix.get(host);
    if (setting.toLowerCase() === 'disabled') {
      if (prev !== undefined) throw new UsageError(`--extproc-per-host: "${host}" is both disabled and overridden`);
      bySuffix.set(host, { kind: 'disabled' });
      continue;
    }
    if (prev?.kind === 'disabled') throw new UsageError(`--extproc-per-host: "${host}" is both disabled and overridden`);
    const [[field, value] = ['', '']] = pairs([setting], ':', `--extproc-per-host ${host}`);
    const base = prev ?? { kind: 'overrides', processingMode: {}, failureModeAllow: undefined };
    if (field === 'failure_mode_allow') {
      if (value !== 'true' && value !== 'false') throw new UsageError(`--extproc-per-host ${host}: failure_mode_allow must be true or false`);
      bySuffix.set(host, { ...base, failureModeAllow: value === 'true' });
    } else {
      bySuffix.set(host, { ...base, processingMode: { ...base.processingMode, ...modeField(field, value, `--extproc-per-host ${host}`) } });
    }
  }
  return Object.freeze([...bySuffix].map(([suffix, override]) => ({ suffix, override })).sort((a, b) => b.suffix.length - a.suffix.length));
}

export function buildExtProcSettings(flags: ExtProcFlagValues): ExtProcSettings {
  let processingMode: ProcessingMode = {
    requestHeaderMode: 'SEND',
    responseHeaderMode: 'SKIP',
    requestBodyMode: 'NONE',
  };
  for (const [field, value] of pairs(flags['extproc-processing-mode'], '=', '--extproc-processing-mode')) {
    processingMode = { ...processingMode, ...modeField(field, value, '--extproc-processing-mode') };
  }
  for (const a of flags['extproc-request-attributes']) {
    if (!isSupportedAttribute(a)) throw new UsageError(`--extproc-request-attributes: "${a}" is not supported (${SUPPORTED_ATTRIBUTES.join(', ')})`);
  }
  const rules = new Set(flags['extproc-mutation-rules'].map((r) => r.toLowerCase()));
  for (const r of rules) if (!MUTATION_FLAGS.has(r)) throw new UsageError(`--extproc-mutation-rules: unknown rule "${r}" (${[...MUTATION_FLAGS].join(', ')})`);
  const maxMessageTimeoutMs = flags['extproc-max-message-timeout-ms'];
  if (maxMessageTimeoutMs !== 0 && maxMessageTimeoutMs < flags['extproc-message-timeout-ms']) {
    throw new UsageError('--extproc-max-message-timeout-ms must be 0 or at least --extproc-message-timeout-ms');
  }
  return Object.freeze({
    failureModeAllow: flags['failure-mode-allow'],
    messageTimeoutMs: flags['extproc-message-timeout-ms'],
    maxMessageTimeoutMs,
    processingMode: Object.freeze(processingMode),
    allowModeOverride: flags['extproc-allow-mode-override'],
    requestAttributes: Object.freeze([...new Set(flags['extproc-request-attributes'])]),
    forwardingNamespaces: Object.freeze([...new Set(flags['extproc-forwarding-namespaces'])]),
    receivingNamespaces: Object.freeze([...new Set([ORIGINAL_DST_NAMESPACE, ...flags['extproc-receiving-namespaces']])]),
    mutationRules: Object.freeze({
      allowAllRouting: rules.has('allow_all_routing'),
      allowEnvoy: rules.has('allow_envoy'),
      disallowSystem: rules.has('disallow_system'),
      disallowIsError: rules.has('disallow_is_error'),
      allowExpression: regex(flags['extproc-mutation-allow-expression'], '--extproc-mutation-allow-expression'),
      disallowExpression: regex(flags['extproc-mutation-disallow-expression'], '--extproc-mutation-disallow-expression'),
    }),
    forwardRules: Object.freeze({
      allowed: Object.freeze(matchers(flags['extproc-forward-allowed-headers'], '--extproc-forward-allowed-headers')),
      disallowed: Object.freeze(matchers(flags['extproc-forward-disallowed-headers'], '--extproc-forward-disallowed-headers')),
    }),
    perHost: perHost(flags['extproc-per-host']),
  });
}

/** Default settings (every flag at its default), e.g. for tests that build the filter directly. */
export function defaultExtProcSettings(overrides: Partial<ExtProcSettings> = {}): ExtProcSettings {
  const flags = Object.fromEntries(
    Object.entries(EXT_PROC_FLAGS).map(([k, spec]) => [k, 'default' in spec ? spec.default : spec.type === 'list' ? [] : undefined]),
  ) as unknown as ExtProcFlagValues;
  return Object.freeze({ ...buildExtProcSettings(flags), ...overrides });
}
