/**
 * The JSON Schema (draft-07) of a component's config file, generated from its flag declarations: one object per
 * section, one property per flag (its type, bounds, choices, default and help), plus the config-file-only fields.
 * The config file reader validates with it (`config-file.ts`); `npm run build` writes it to `schema/` for editors
 * (`# yaml-language-server: $schema=…` at the top of a config file).
 */
import { fileKey, type FlagSet, type FlagSpec } from './flags.js';

export type JsonSchema = Readonly<Record<string, unknown>>;

/** A secret may be given as the value or as `{ file: PATH }` (read when the config is read; relative to the config file). */
const SECRET_FILE = { properties: { file: { type: 'string', minLength: 1 } }, required: ['file'], additionalProperties: false };

function describe(name: string, spec: FlagSpec): string {
  return `${spec.help} (--${name}, ${spec.env})`;
}

/** The schema of one flag's value in the file. */
export function flagSchema(name: string, spec: FlagSpec): Record<string, unknown> {
  const description = describe(name, spec);
  switch (spec.type) {
    case 'string':
    case 'string?': {
      const base = spec.secret === true ? { type: ['string', 'object'], ...SECRET_FILE } : { type: 'string' };
      return spec.type === 'string' && spec.secret !== true ? { ...base, description, default: spec.default } : { ...base, description };
    }
    case 'number':
      return {
        type: spec.float === true ? 'number' : 'integer',
        minimum: spec.min ?? 0,
        ...(spec.max === undefined ? {} : { maximum: spec.max }),
        description,
        default: spec.default,
      };
    case 'boolean':
      return { type: 'boolean', description, default: spec.default };
    case 'choice': {
      // `on`/`off` choices also take YAML and JSON booleans.
      const onOff = spec.choices.length === 2 && spec.choices.includes('on') && spec.choices.includes('off');
      return onOff
        ? { type: ['string', 'boolean'], enum: [...spec.choices, true, false], description, default: spec.default }
        : { type: 'string', enum: [...spec.choices], description, default: spec.default };
    }
    case 'list':
      return { type: 'array', items: { type: 'string' }, description };
  }
}

function object(properties: Record<string, unknown>, description?: string): Record<string, unknown> {
  return { type: 'object', ...(description === undefined ? {} : { description }), additionalProperties: false, properties };
}

/** The whole config file's schema. */
export function configSchema(set: FlagSet): JsonSchema {
  const top: Record<string, unknown> = { $schema: { type: 'string', description: 'The JSON Schema this file follows (for editors).' } };
  const sections: Record<string, Record<string, unknown>> = {};
  for (const section of Object.keys(set.sections)) sections[section] = {};
  const place = (path: string, schema: unknown): void => {
    const [head = '', ...rest] = path.split('.');
    const target = rest.length === 0 ? top : (sections[head] ??= {});
    target[rest.length === 0 ? head : rest.join('.')] = schema;
  };
  for (const [name, spec] of Object.entries(set.flags)) {
    const key = fileKey(name, spec);
    if (key !== undefined) place(key, flagSchema(name, spec));
  }
  for (const [path, field] of Object.entries(set.fileFields ?? {})) place(path, { ...field.schema, description: field.help });
  for (const [section, properties] of Object.entries(sections)) {
    if (Object.keys(properties).length > 0) top[section] = object(properties, set.sections[section]);
  }
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: `actor-edge ${set.command} config file`,
    description: `${set.summary} Flags and environment variables override the file.`,
    ...object(top),
  };
}
