import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { etagFor } from '../db/versioned-rows.js';

export function setEtag(reply: FastifyReply, version: number): void {
  reply.header('etag', etagFor(version));
}

/** One entity tag of a conditional header (RFC 9110, 8.8.3): its opaque tag with the quotes, and whether it is weak. */
export interface EntityTag {
  readonly weak: boolean;
  readonly opaque: string;
}

/** One list element: `[W/]"…"` (the quoted part any etagc: %x21, %x23-7E, obs-text) or nothing, then a comma or the end. */
const LIST_ELEMENT = /[ \t]*(?:(W\/)?("[\x21\x23-\x7e\x80-\xff]*"))?[ \t]*(,|$)/y;

/**
 * An `If-Match` or `If-None-Match` value: `*`, or its list of entity tags (empty list elements
 * allowed, as RFC 9110's `#` rule does); undefined when it is neither, and so is to be ignored.
 * A comma inside a quoted tag belongs to the tag.
 */
export function parseEntityTags(value: string): '*' | EntityTag[] | undefined {
  if (value.trim() === '*') return '*';
  const tags: EntityTag[] = [];
  LIST_ELEMENT.lastIndex = 0;
  for (;;) {
    const match = LIST_ELEMENT.exec(value);
    if (!match) return undefined;
    if (match[2] !== undefined) tags.push({ weak: match[1] !== undefined, opaque: match[2] });
    if (match[3] === '') return tags;
  }
}

/**
 * The versions `If-Match` accepts, or undefined when the client sent none (or `*`). If-Match compares
 * strongly (RFC 9110, 13.1.1): a weak tag matches nothing, nor does a tag that is not ours, so both end
 * in a 412 like a stale one.
 */
export function acceptedVersions(request: FastifyRequest): number[] | undefined {
  const header = request.headers['if-match'];
  if (header === undefined) return undefined;
  const tags = parseEntityTags(header);
  if (tags === '*') return undefined;
  return (tags ?? [])
    .filter((tag) => !tag.weak)
    .map((tag) => /^"(\d{1,15})"$/.exec(tag.opaque)?.[1])
    .filter((v): v is string => v !== undefined)
    .map(Number);
}

/**
 * Whether `If-None-Match` names `etag` or is `*` (the resource exists: it is being answered), so that
 * a GET answers 304. Weak comparison (RFC 9110, 13.1.2): `W/"3"` matches `"3"`. A value that
 * is not a valid one is ignored.
 */
export function noneMatchHits(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (header === undefined) return false;
  const tags = parseEntityTags(header);
  if (tags === '*') return true;
  const current = etag.replace(/^W\//, '');
  return (tags ?? []).some((tag) => tag.opaque === current);
}

/**
 * A GET whose 200 carries an `ETag` that `If-None-Match` names is answered 304 Not Modified instead:
 * the same headers (ETag, rate limits, request id), no body. In one place for every operation, as
 * documentStandardContract documents it for every GET whose 200 declares an ETag. (The HEAD that
 * Fastify adds beside a GET is left as it is: its own onSend, which measures the body for
 * Content-Length, cannot send a 304 without one.)
 */
export function installConditionalGet(app: FastifyInstance): void {
  // A callback hook: every answer passes here.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (reply.statusCode !== 200 || request.method !== 'GET') return done(null, payload);
    const etag = reply.getHeader('etag');
    if (typeof etag !== 'string' || !noneMatchHits(request, etag)) return done(null, payload);
    (payload as { destroy?: () => void } | null)?.destroy?.();
    reply.code(304);
    reply.removeHeader('content-type');
    reply.removeHeader('content-length');
    done(null, null);
  });
}
