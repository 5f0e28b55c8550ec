/**
 * A small renderer for the kustomizations in deploy/kubernetes, so the manifests can be built and checked where
 * `kubectl kustomize` is not installed (the test compares the two where it is). It implements exactly the part of
 * kustomize those files use, and refuses anything else rather than render it differently:
 *
 * - `resources`: YAML files (one or more documents) and directories holding a kustomization, built first;
 * - `namespace`: set on every object (a Namespace object is renamed to it, as kustomize does);
 * - `patches`: JSON 6902 operations (add, remove, replace, test), inline (`patch`) or from a file (`path`),
 *   applied to the objects a `target` selects by kind and name;
 * - `images`: a container image whose name matches gets `newName` and/or `newTag` (or `digest`).
 *
 * Order within one kustomization: its resources (each base fully built), then patches, then images, then the
 * namespace.
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** A rendered object: apiVersion, kind and metadata.name at least. */
export interface ManifestObject extends JsonObject {
  apiVersion: string;
  kind: string;
  metadata: JsonObject & { name: string; namespace?: string };
}

export class KustomizeError extends Error {
  override readonly name = 'KustomizeError';
}

const KUSTOMIZATION_FILES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'];
const KNOWN_FIELDS: ReadonlySet<string> = new Set(['apiVersion', 'kind', 'namespace', 'resources', 'patches', 'images']);

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Every YAML document of `file`, parsed strictly (duplicate keys and syntax errors name the file). */
export function readYamlDocuments(file: string, text = readFileSync(file, 'utf8')): JsonValue[] {
  const docs = parseAllDocuments(text, { uniqueKeys: true, prettyErrors: true });
  const out: JsonValue[] = [];
  for (const doc of Array.isArray(docs) ? docs : [docs]) {
    if (doc.errors.length > 0) throw new KustomizeError(`${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
    const value = doc.toJS({ maxAliasCount: 0 }) as JsonValue | undefined;
    if (value !== null && value !== undefined) out.push(value);
  }
  return out;
}

function asManifest(value: JsonValue, where: string): ManifestObject {
  if (!isObject(value)) throw new KustomizeError(`${where}: a resource must be a mapping`);
  const { apiVersion, kind, metadata } = value;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string' || !isObject(metadata) || typeof metadata.name !== 'string') {
    throw new KustomizeError(`${where}: a resource needs apiVersion, kind and metadata.name`);
  }
  return value as ManifestObject;
}

function kustomizationFile(dir: string): string {
  for (const name of KUSTOMIZATION_FILES) {
    const file = path.join(dir, name);
    try {
      if (statSync(file).isFile()) return file;
    } catch {
      /* next name */
    }
  }
  throw new KustomizeError(`${dir}: no kustomization.yaml`);
}

/** Builds the kustomization in `dir` into its objects, in resource order. */
export function renderKustomization(dir: string): ManifestObject[] {
  const file = kustomizationFile(dir);
  const [k, ...more] = readYamlDocuments(file);
  if (!isObject(k) || more.length > 0) throw new KustomizeError(`${file}: expected one mapping`);
  for (const field of Object.keys(k)) if (!KNOWN_FIELDS.has(field)) throw new KustomizeError(`${file}: "${field}" is not supported by this renderer`);
  if (k.kind !== 'Kustomization') throw new KustomizeError(`${file}: kind must be Kustomization`);
  const objects: ManifestObject[] = [];
  for (const entry of list(k.resources, `${file}: resources`)) {
    if (typeof entry !== 'string') throw new KustomizeError(`${file}: a resource is a path`);
    const target = path.resolve(dir, entry);
    if (statSync(target).isDirectory()) objects.push(...renderKustomization(target));
    else objects.push(...readYamlDocuments(target).map((v) => asManifest(v, target)));
  }
  for (const patch of list(k.patches, `${file}: patches`)) applyPatchEntry(objects, patch, dir, file);
  for (const image of list(k.images, `${file}: images`)) applyImage(objects, image, file);
  if (k.namespace !== undefined) {
    if (typeof k.namespace !== 'string') throw new KustomizeError(`${file}: namespace must be a string`);
    for (const o of objects) {
      if (o.kind === 'Namespace') o.metadata.name = k.namespace;
      else o.metadata.namespace = k.namespace;
    }
  }
  return objects;
}

function list(v: JsonValue | undefined, where: string): JsonValue[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new KustomizeError(`${where} must be a list`);
  return v;
}

function applyPatchEntry(objects: ManifestObject[], entry: JsonValue, dir: string, file: string): void {
  if (!isObject(entry)) throw new KustomizeError(`${file}: a patch must be a mapping`);
  for (const field of Object.keys(entry)) if (!['path', 'patch', 'target'].includes(field)) throw new KustomizeError(`${file}: patch field "${field}" is not supported`);
  const target = entry.target;
  if (!isObject(target)) throw new KustomizeError(`${file}: only patches with a target (JSON 6902) are supported`);
  for (const field of Object.keys(target)) if (!['kind', 'name', 'group', 'version'].includes(field)) throw new KustomizeError(`${file}: target field "${field}" is not supported`);
  const source = typeof entry.path === 'string' ? path.resolve(dir, entry.path) : file;
  const text = typeof entry.path === 'string' ? readFileSync(source, 'utf8') : entry.patch;
  if (typeof text !== 'string') throw new KustomizeError(`${file}: a patch needs "patch" or "path"`);
  const [ops, ...more] = readYamlDocuments(source, text);
  if (!Array.isArray(ops) || more.length > 0) throw new KustomizeError(`${source}: only JSON 6902 patches (a list of operations) are supported`);
  const selected = objects.filter((o) => matches(o, target));
  if (selected.length === 0) throw new KustomizeError(`${file}: patch target ${JSON.stringify(target)} selects nothing`);
  for (const o of selected) for (const op of ops) applyOperation(o, op, `${source} (${o.kind}/${o.metadata.name})`);
}

function matches(o: ManifestObject, target: JsonObject): boolean {
  const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['', o.apiVersion];
  return (
    (target.kind === undefined || target.kind === o.kind) &&
    (target.name === undefined || target.name === o.metadata.name) &&
    (target.group === undefined || target.group === group) &&
    (target.version === undefined || target.version === version)
  );
}

/** RFC 6901 pointer → tokens. */
function pointer(p: JsonValue | undefined, where: string): string[] {
  if (typeof p !== 'string' || !p.startsWith('/')) throw new KustomizeError(`${where}: a path must be a JSON pointer`);
  return p
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function child(parent: JsonValue, token: string, where: string): JsonValue {
  const next = Array.isArray(parent) ? parent[index(parent, token, false, where)] : isObject(parent) ? parent[token] : undefined;
  if (next === undefined) throw new KustomizeError(`${where}: no "${token}"`);
  return next;
}

function index(array: JsonValue[], token: string, forAdd: boolean, where: string): number {
  if (forAdd && token === '-') return array.length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new KustomizeError(`${where}: "${token}" is not an array index`);
  const i = Number(token);
  if (i > array.length || (!forAdd && i === array.length)) throw new KustomizeError(`${where}: index ${i} is out of range`);
  return i;
}

function applyOperation(o: ManifestObject, op: JsonValue, where: string): void {
  if (!isObject(op) || typeof op.op !== 'string') throw new KustomizeError(`${where}: an operation needs "op"`);
  const tokens = pointer(op.path, where);
  const last = tokens.pop() as string;
  let parent: JsonValue = o;
  for (const t of tokens) parent = child(parent, t, where);
  const value = structuredClone(op.value);
  switch (op.op) {
    case 'add':
      if (value === undefined) throw new KustomizeError(`${where}: add needs a value`);
      if (Array.isArray(parent)) parent.splice(index(parent, last, true, where), 0, value);
      else if (isObject(parent)) parent[last] = value;
      else throw new KustomizeError(`${where}: cannot add under a scalar`);
      return;
    case 'replace':
      if (value === undefined) throw new KustomizeError(`${where}: replace needs a value`);
      child(parent, last, where);
      if (Array.isArray(parent)) parent[index(parent, last, false, where)] = value;
      else (parent as JsonObject)[last] = value;
      return;
    case 'remove':
      child(parent, last, where);
      if (Array.isArray(parent)) parent.splice(index(parent, last, false, where), 1);
      else delete (parent as JsonObject)[last];
      return;
    case 'test':
      if (JSON.stringify(child(parent, last, where)) !== JSON.stringify(value)) throw new KustomizeError(`${where}: test failed at ${String(op.path)}`);
      return;
    default:
      throw new KustomizeError(`${where}: operation "${op.op}" is not supported`);
  }
}

/** `name[:tag][@digest]` → its parts (a registry port is not a tag). */
function splitImage(image: string): { name: string; tag?: string; digest?: string } {
  const at = image.indexOf('@');
  const digest = at === -1 ? undefined : image.slice(at + 1);
  const rest = at === -1 ? image : image.slice(0, at);
  const colon = rest.lastIndexOf(':');
  const tag = colon > rest.lastIndexOf('/') ? rest.slice(colon + 1) : undefined;
  const name = tag === undefined ? rest : rest.slice(0, colon);
  return { name, ...(tag === undefined ? {} : { tag }), ...(digest === undefined ? {} : { digest }) };
}

function applyImage(objects: ManifestObject[], entry: JsonValue, file: string): void {
  if (!isObject(entry) || typeof entry.name !== 'string') throw new KustomizeError(`${file}: an image needs a name`);
  for (const field of Object.keys(entry)) if (!['name', 'newName', 'newTag', 'digest'].includes(field)) throw new KustomizeError(`${file}: image field "${field}" is not supported`);
  const { name, newName, newTag, digest } = entry;
  for (const o of objects) {
    const spec = isObject(o.spec) && isObject(o.spec.template) && isObject(o.spec.template.spec) ? o.spec.template.spec : undefined;
    if (spec === undefined) continue;
    for (const key of ['initContainers', 'containers']) {
      const containers = spec[key];
      if (!Array.isArray(containers)) continue;
      for (const c of containers) {
        if (!isObject(c) || typeof c.image !== 'string') continue;
        const parts = splitImage(c.image);
        if (parts.name !== name) continue;
        const base = typeof newName === 'string' ? newName : parts.name;
        if (typeof digest === 'string') c.image = `${base}@${digest}`;
        else if (newTag !== undefined) c.image = `${base}:${String(newTag)}`;
        else c.image = `${base}${parts.tag === undefined ? '' : `:${parts.tag}`}${parts.digest === undefined ? '' : `@${parts.digest}`}`;
      }
    }
  }
}
