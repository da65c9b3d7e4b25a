import { Type, type TProperties, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { errors } from '../errors.js';
import type { Page } from '../db/page.js';

export const MAX_OFFSET = 2_147_483_647;

/** `limit` and `offset` as the contract defines them; out-of-range values are rejected, never clamped. */
export const PaginationQuery = {
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50, description: 'Page size, 1 to 100.' }),
  offset: Type.Integer({ minimum: 0, maximum: MAX_OFFSET, default: 0, description: 'Items to skip.' }),
};

/**
 * The query string of a list: paging plus the list's own filters. Unknown parameters are refused
 * (a misspelt filter such as `stauts` must not silently return everything).
 */
export function ListQuery<P extends TProperties>(filters: P) {
  return Type.Object({ ...PaginationQuery, ...filters }, { additionalProperties: false });
}

/** The query string of a route that takes no parameters: any parameter is refused, as on lists. */
export const NoQuery = Type.Object({}, { additionalProperties: false });

/**
 * Gives every API route that declares no query parameters the NoQuery schema, so that `?foo=1`
 * (a filter a client believes exists) is a 400 everywhere, not only on lists.
 */
export function refuseUnknownQuery(route: { url: string; schema?: { querystring?: unknown } }, prefix: string): void {
  if (!route.url.startsWith(prefix) || route.schema?.querystring) return;
  route.schema = { ...route.schema, querystring: NoQuery };
}

/**
 * `limit` and `offset` must be written as plain decimal integers: the query-string coercion would
 * otherwise read `0x10`, `1e1` or ` 5` as numbers.
 */
export function installStrictPaging(app: FastifyInstance): void {
  // A callback hook: every request passes here, and a promise per request buys nothing.
  app.addHook('preValidation', (request, _reply, done) => {
    const query = request.query as Record<string, unknown> | undefined;
    if (!query) return done();
    for (const name of ['limit', 'offset'] as const) {
      const value = query[name];
      if (value !== undefined && (typeof value !== 'string' || !/^\d{1,15}$/.test(value))) {
        return done(errors.validation([{ field: `querystring.${name}`, message: name === 'limit' ? 'must be an integer from 1 to 100' : 'must be an integer of 0 or more' }]));
      }
    }
    done();
  });
}

/**
 * The list envelope: the page under the collection key, plus total, limit and offset. Named (`$id`),
 * so the document has one component per list and generated clients one type.
 */
export function listEnvelope<K extends string, T extends TSchema>(key: K, item: T, options: { $id: string; description: string }) {
  return Type.Object(
    {
      [key]: Type.Array(item),
      total: Type.Integer({ minimum: 0, description: 'Items in the whole (filtered) collection.' }),
      limit: Type.Integer(),
      offset: Type.Integer(),
    } as { [P in K]: ReturnType<typeof Type.Array<T>> } & {
      total: ReturnType<typeof Type.Integer>;
      limit: ReturnType<typeof Type.Integer>;
      offset: ReturnType<typeof Type.Integer>;
    },
    options,
  );
}

/**
 * The list envelope written around items that are already JSON text (each, or all of them joined by
 * commas): the same bytes the response
 * serializer writes for listEnvelope(key, …) from objects, for lists whose items the database
 * serializes itself (GET /records).
 */
export function serializedListEnvelope(key: string, itemsJson: string[] | string, total: number, page: Page): string {
  const items = typeof itemsJson === 'string' ? itemsJson : itemsJson.join(',');
  return `{${JSON.stringify(key)}:[${items}],"total":${total},"limit":${page.limit},"offset":${page.offset}}`;
}
