import { Type, type TProperties, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest, preSerializationHookHandler, RouteOptions } from 'fastify';
import { errors } from '../errors.js';
import type { Page } from '../db/page.js';
import { addLinks, linkTarget, linkValue } from './link-header.js';

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
export function ListQuery<P extends TProperties>(filters: P, patternProperties?: Readonly<Record<string, object>>) {
  return Type.Object({ ...PaginationQuery, ...filters }, { additionalProperties: false, ...(patternProperties ? { patternProperties } : {}) });
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
    if (!isPlainInteger(query.limit)) return done(errors.validation([{ field: 'querystring.limit', message: 'must be an integer from 1 to 100' }]));
    if (!isPlainInteger(query.offset)) return done(errors.validation([{ field: 'querystring.offset', message: 'must be an integer of 0 or more' }]));
    done();
  });
}

/** A paging parameter absent, or written as decimal digits (at most 15). */
function isPlainInteger(value: unknown): boolean {
  return value === undefined || (typeof value === 'string' && PLAIN_INTEGER.test(value));
}

const PLAIN_INTEGER = /^\d{1,15}$/;

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
 * The pages around this one as RFC 8288 link-values, as GitHub sends them: `first`, `prev` (not on the
 * first page), `next` (not on the last) and `last`. Each is the request's own path-absolute target with
 * its other parameters as sent, and `limit` and `offset` set. Pages are counted from offset 0 in steps
 * of `limit`, so `last` is the page that following `next` from the first page ends on.
 */
export function pageLinks(requestTarget: string, total: number, page: Page): string[] {
  const queryAt = requestTarget.indexOf('?');
  const path = queryAt === -1 ? requestTarget : requestTarget.slice(0, queryAt);
  const kept = (queryAt === -1 ? '' : requestTarget.slice(queryAt + 1)).split('&').filter((pair) => pair !== '' && !isPagingParameter(pair));
  const at = (offset: number) => linkTarget(`${path}?${[...kept, `limit=${page.limit}`, `offset=${offset}`].join('&')}`);
  const last = total === 0 ? 0 : Math.floor((total - 1) / page.limit) * page.limit;
  const links = [linkValue(at(0), 'first')];
  // From past the end, the previous page is the last one that holds anything.
  if (page.offset > 0) links.push(linkValue(at(Math.max(0, Math.min(page.offset - page.limit, last))), 'prev'));
  if (page.offset + page.limit < total) links.push(linkValue(at(page.offset + page.limit), 'next'));
  links.push(linkValue(at(last), 'last'));
  return links;
}

function isPagingParameter(pair: string): boolean {
  const raw = pair.split('=', 1)[0]!;
  let name = raw;
  try {
    name = decodeURIComponent(raw.replaceAll('+', ' '));
  } catch {
    // Not valid percent-encoding: the query parser refused the request before it got here.
  }
  return name === 'limit' || name === 'offset';
}

/** Whether a route answers a list: its query is a ListQuery (it pages with `limit` and `offset`). */
export function isListRoute(route: Pick<RouteOptions, 'schema'>): boolean {
  const properties = (route.schema?.querystring as { properties?: Record<string, unknown> } | undefined)?.properties;
  return properties?.limit !== undefined && properties.offset !== undefined;
}

/**
 * Every list answer carries the `Link` field of its pages (pageLinks): envelopes a handler returns as
 * objects get it here, before they are serialized; those sent as JSON text get it from sendSerializedList.
 */
export function installPageLinks(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (!isListRoute(route)) return;
    const existing = route.preSerialization;
    route.preSerialization = [...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]), linkEnvelopePages];
  });
}

const linkEnvelopePages: preSerializationHookHandler = (request, reply, payload, done) => {
  const envelope = payload as Partial<Record<'total' | 'limit' | 'offset', unknown>> | null;
  if (reply.statusCode === 200 && typeof envelope?.total === 'number' && typeof envelope.limit === 'number' && typeof envelope.offset === 'number') {
    addLinks(reply, pageLinks(request.url, envelope.total, { limit: envelope.limit, offset: envelope.offset }));
  }
  done(null, payload);
};

/** Sends a list whose items are already JSON text (serializedListEnvelope), with the `Link` field of its pages. */
export function sendSerializedList(request: FastifyRequest, reply: FastifyReply, key: string, itemsJson: string[] | string, total: number, page: Page): FastifyReply {
  addLinks(reply, pageLinks(request.url, total, page));
  // A string sent as JSON skips the response serializer (hence the cast past the schema's type); these
  // are the bytes it would have written from the objects.
  return reply.type('application/json').send(serializedListEnvelope(key, itemsJson, total, page) as never);
}

/**
 * The list envelope written around items that are already JSON text (each, or all of them joined by
 * commas): the same bytes the response
 * serializer writes for listEnvelope(key, …) from objects, for lists whose items the database
 * serializes itself (GET /records).
 */
function serializedListEnvelope(key: string, itemsJson: string[] | string, total: number, page: Page): string {
  const items = typeof itemsJson === 'string' ? itemsJson : itemsJson.join(',');
  return `{${JSON.stringify(key)}:[${items}],"total":${total},"limit":${page.limit},"offset":${page.offset}}`;
}
