/**
 * The Fastify instance every admin server is built on. Admin routes declare no JSON schemas (they read and write
 * their own JSON), so the instance gets no schema compilers: Fastify would otherwise load Ajv and fast-json-stringify's
 * compiler for it (≈ 45 ms of CPU at every start of every component). A route that declares a schema is refused when
 * it is added, saying why.
 */
import Fastify, { type FastifyInstance } from 'fastify';

const NO_SCHEMAS = 'admin routes declare no schemas (lib/admin-app.ts builds them without schema compilers)';

/** A schema compiler that refuses every schema. */
const refuse = () => (): never => {
  throw new Error(NO_SCHEMAS);
};

export function createAdminApp(): FastifyInstance {
  return Fastify({ logger: false, schemaController: { compilersFactory: { buildValidator: refuse, buildSerializer: refuse } } });
}
