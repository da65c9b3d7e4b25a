import fastJsonStringify from 'fast-json-stringify';
import type { FastifyServerOptions } from 'fastify';

type SerializerFactory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']>;
type JsonSchema = Parameters<typeof fastJsonStringify>[0];

/**
 * Fastify's serializer factory (`schemaController.compilersFactory.buildSerializer`), compiling each
 * response serializer with only the named schemas its response refers to. Fastify's default hands
 * fast-json-stringify every named schema with every response schema, and fast-json-stringify checks
 * each of them (depth, and against the JSON Schema meta-schema) and indexes it again for every
 * serializer: ~50 named schemas × every status of every route was most of a process's start (and of
 * every test's app). The serializers are the same; only the unused schemas are left out. As a factory
 * (not `setSerializerCompiler`), it also serves every encapsulated context with that context's schemas.
 */
export const responseSerializers: SerializerFactory = (externalSchemas, serializerOpts) => {
  const named = (externalSchemas ?? {}) as Record<string, unknown>;
  return ({ schema }) => {
    const own = (schema as { $id?: string }).$id;
    return fastJsonStringify(schema as JsonSchema, { ...serializerOpts, schema: referencedSchemas(schema, named, own) as Record<string, JsonSchema> });
  };
};

/** The named schemas `schema` refers to (`$ref` by `$id`), and those they refer to, but never `exclude` (the schema's own id). */
export function referencedSchemas(schema: unknown, named: Record<string, unknown>, exclude?: string): Record<string, unknown> {
  const found: Record<string, unknown> = {};
  const pending: unknown[] = [schema];
  while (pending.length > 0) {
    const node = pending.pop();
    if (typeof node !== 'object' || node === null) continue;
    if (Array.isArray(node)) {
      pending.push(...node);
      continue;
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') {
        const id = value.split('#')[0]!;
        if (id && id !== exclude && !Object.hasOwn(found, id) && Object.hasOwn(named, id)) {
          found[id] = named[id];
          pending.push(named[id]);
        }
      } else pending.push(value);
    }
  }
  return found;
}
