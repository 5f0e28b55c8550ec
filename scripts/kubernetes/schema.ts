/**
 * Strict, offline validation of Kubernetes objects against the API of one pinned version: the package
 * kubernetes-models (pinned in package.json), generated from Kubernetes v1.33's OpenAPI definitions. Two checks:
 *
 * 1. the package's JSON-schema validators (ajv, precompiled from the OpenAPI): types, required fields, enums,
 *    formats — but, like the OpenAPI itself, they accept fields the API does not know;
 * 2. unknown fields: every object is type-checked with the TypeScript compiler against the package's interfaces
 *    (generated from the same definitions). A field the API does not have is an excess property there, at any
 *    depth; so is a misspelling (`readinesProbe`). kubectl rejects those too (`--validate=strict`), but only with
 *    a server.
 *
 * Problems name the object and the JSON pointer of the field.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import type { JsonValue, ManifestObject } from './kustomize.js';

/** The Kubernetes release whose API the pinned kubernetes-models describes. */
export const KUBERNETES_VERSION = 'v1.33.0';

export interface SchemaProblem {
  /** `Kind/name`. */
  readonly object: string;
  /** JSON pointer of the field (empty: the object itself). */
  readonly path: string;
  readonly message: string;
}

const require = createRequire(import.meta.url);
/** The repository root (this file is compiled to dist/scripts/kubernetes/). */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** `apps/v1` + `Deployment` → `kubernetes-models/apps/v1/Deployment` (core `v1` → `kubernetes-models/v1/…`). */
function modelModule(o: ManifestObject): string {
  return `kubernetes-models/${o.apiVersion}/${o.kind}`;
}

/** How a problem names its object: `Kind/name` by default. */
export type ObjectName = (o: ManifestObject) => string;

export const kindAndName: ObjectName = (o) => `${o.kind}/${o.metadata.name}`;

interface Model {
  new (data: unknown): { validate(): void };
}

function loadModel(o: ManifestObject): Model | undefined {
  try {
    const exports = require(modelModule(o)) as Record<string, unknown>;
    const model = exports[o.kind];
    return typeof model === 'function' ? (model as Model) : undefined;
  } catch {
    return undefined;
  }
}

/** Check 1: the generated JSON-schema validators. */
function schemaProblems(o: ManifestObject, model: Model, label: ObjectName): SchemaProblem[] {
  try {
    new model(structuredClone(o)).validate();
    return [];
  } catch (err) {
    const errors = (err as { errors?: { instancePath?: string; message?: string }[] }).errors;
    if (!Array.isArray(errors)) return [{ object: label(o), path: '', message: (err as Error).message }];
    return errors.map((e) => ({ object: label(o), path: e.instancePath ?? '', message: e.message ?? 'invalid' }));
  }
}

/** A TypeScript literal of `value`, one property per line; `paths[line]` is the JSON pointer that line starts. */
function emit(value: JsonValue, pointer: string, indent: string, lines: string[], paths: string[], prefix: string, suffix: string): void {
  const open = (text: string): void => {
    lines.push(`${indent}${prefix}${text}`);
    paths.push(pointer);
  };
  if (Array.isArray(value)) {
    if (value.length === 0) return open(`[]${suffix}`);
    open('[');
    value.forEach((v, i) => emit(v, `${pointer}/${i}`, `${indent}  `, lines, paths, '', ','));
    lines.push(`${indent}]${suffix}`);
    paths.push(pointer);
    return;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length === 0) return open(`{}${suffix}`);
    open('{');
    for (const [k, v] of entries) emit(v, `${pointer}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, `${indent}  `, lines, paths, `${JSON.stringify(k)}: `, ',');
    lines.push(`${indent}}${suffix}`);
    paths.push(pointer);
    return;
  }
  open(`${JSON.stringify(value)}${suffix}`);
}

const OPTIONS: ts.CompilerOptions = {
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  types: [],
  lib: ['lib.es2022.d.ts'],
};
let previous: ts.Program | undefined;

/** Check 2: unknown (and mistyped) fields, through the TypeScript checker. */
function fieldProblems(objects: readonly ManifestObject[], label: ObjectName): SchemaProblem[] {
  const file = path.join(ROOT, '__kubernetes_manifests_check__.ts');
  const lines: string[] = [];
  const paths: string[] = [];
  const owners: (ManifestObject | undefined)[] = [];
  objects.forEach((o, i) => {
    const type = `I${o.kind}`;
    lines.push(`import type { ${type} as T${i} } from ${JSON.stringify(modelModule(o))};`);
    paths.push('');
    owners.push(undefined);
  });
  objects.forEach((o, i) => {
    const start = lines.length;
    emit(o, '', '', lines, paths, `export const o${i}: T${i} = `, ';');
    for (let l = start; l < lines.length; l++) owners[l] = o;
  });
  const text = lines.join('\n') + '\n';
  const host = ts.createCompilerHost(OPTIONS, true);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, onError, create) => (name === file ? ts.createSourceFile(name, text, language, true) : getSourceFile(name, language, onError, create));
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === file || fileExists(name);
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => (name === file ? text : readFile(name));
  const program = ts.createProgram([file], OPTIONS, host, previous);
  previous = program;
  const source = program.getSourceFile(file) as ts.SourceFile;
  const diagnostics = [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
  return diagnostics.map((d) => {
    const line = d.start === undefined ? 0 : source.getLineAndCharacterOfPosition(d.start).line;
    const owner = owners[line];
    return {
      object: owner === undefined ? 'schema' : label(owner),
      path: paths[line] ?? '',
      message: ts.flattenDiagnosticMessageText(d.messageText, ' ').replace(/'"([^"]+)"'/g, "'$1'"),
    };
  });
}

/** Every problem of `objects` against Kubernetes' API (empty: all valid, no unknown field anywhere). */
export function validateManifests(objects: readonly ManifestObject[], label: ObjectName = kindAndName): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  const known: ManifestObject[] = [];
  for (const o of objects) {
    const model = loadModel(o);
    if (model === undefined) {
      problems.push({ object: label(o), path: '/apiVersion', message: `no ${o.apiVersion} ${o.kind} in Kubernetes ${KUBERNETES_VERSION}` });
      continue;
    }
    problems.push(...schemaProblems(o, model, label));
    known.push(o);
  }
  if (known.length > 0) problems.push(...fieldProblems(known, label));
  return problems;
}

export function formatProblems(problems: readonly SchemaProblem[]): string {
  return problems.map((p) => `${p.object} ${p.path || '/'}: ${p.message}`).join('\n');
}
