/**
 * Loads the project's own .proto files with @grpc/proto-loader. One place decides the loader options, so every
 * component sees messages in the same shape: snake_case field names kept (keepCase), enums as names, int64 as
 * strings, defaults filled, and a virtual `request`/`response` property naming the set oneof member.
 * Struct values from proto-loader's bundled google/protobuf/struct.proto are camelCase (`stringValue`).
 */
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/** The repository's proto/ directory (this file compiles to dist/lib/proto.js). */
export const PROTO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../proto');

export const LOADER_OPTIONS: protoLoader.Options = Object.freeze({
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTO_ROOT],
});

const cache = new Map<string, grpc.GrpcObject>();

/** Loads one .proto file (relative to proto/) and returns its grpc object tree. Cached per file. */
export function loadProto(relativeFile: string): grpc.GrpcObject {
  const hit = cache.get(relativeFile);
  if (hit) return hit;
  const definition = protoLoader.loadSync(path.join(PROTO_ROOT, relativeFile), LOADER_OPTIONS);
  const loaded = grpc.loadPackageDefinition(definition);
  cache.set(relativeFile, loaded);
  return loaded;
}

/** Walks a dotted name such as `ateapi.Control` in a loaded grpc object tree. */
export function lookup<T>(root: grpc.GrpcObject, dotted: string): T {
  let node: unknown = root;
  for (const part of dotted.split('.')) {
    node = (node as Record<string, unknown> | undefined)?.[part];
    if (node === undefined) throw new Error(`proto: ${dotted} not found`);
  }
  return node as T;
}
