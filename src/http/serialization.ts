import fastJsonStringify from 'fast-json-stringify';
import type { FastifyInstance } from 'fastify';

/**
 * Response serializers compiled with only the named schemas each response refers to. Fastify's default
 * compiler hands fast-json-stringify every schema added to the app with every response schema, and
 * fast-json-stringify checks each of them (depth, and against the JSON Schema meta-schema) and indexes
 * it again for every serializer: ~50 named schemas × every status of every route was most of a
 * process's start (and of every test's app). The serializers are the same; only the unused schemas
 * are left out.
 */
export function installSerialization(app: FastifyInstance): void {
  app.setSerializerCompiler(({ schema }) => {
    const named = app.getSchemas() as Record<string, unknown>;
    const own = (schema as { $id?: string }).$id;
    return fastJsonStringify(schema as Parameters<typeof fastJsonStringify>[0], { schema: referencedSchemas(schema, named, own) as Record<string, Parameters<typeof fastJsonStringify>[0]> });
  });
}

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
        if (id && id !== exclude && !(id in found) && id in named) {
          found[id] = named[id];
          pending.push(named[id]);
        }
      } else pending.push(value);
    }
  }
  return found;
}
