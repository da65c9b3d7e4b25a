import { Type, type TSchema } from '@sinclair/typebox';
import type { onSendHookHandler, RouteOptions } from 'fastify';
import { addLinks, linkTarget, linkValue } from './link-header.js';
import { hookList } from './route-hooks.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The operation is deprecated: every answer says so, and so does the document (announceDeprecation). */
    deprecation?: Deprecation;
  }
}

/** The shortest notice between a deprecation and its sunset (docs/compatibility.md): six months. */
export const MINIMUM_NOTICE_DAYS = 180;
const DAY_MS = 86_400_000;

export interface Deprecation {
  /** When the operation was deprecated (RFC 9745 `Deprecation`). */
  readonly since: Date;
  /** From when it may stop being served (RFC 8594 `Sunset`). */
  readonly sunset: Date;
  /** Path-absolute URL of what tells the deprecation and what to use instead (rel="deprecation" and rel="sunset"). */
  readonly documentation: string;
  /** The request target of what replaces the operation, for a request's target (rel="successor-version", RFC 5829). */
  readonly successor?: (requestTarget: string) => string;
}

/** A deprecation, refused when it gives less notice than the compatibility policy promises. */
export function defineDeprecation(deprecation: Deprecation): Deprecation {
  if (deprecation.sunset.getTime() - deprecation.since.getTime() < MINIMUM_NOTICE_DAYS * DAY_MS) {
    throw new Error(`a deprecation gives at least ${MINIMUM_NOTICE_DAYS} days of notice before its sunset`);
  }
  return deprecation;
}

/** The fields every answer of a deprecated operation carries, besides its links. */
export function deprecationFields(deprecation: Deprecation): { deprecation: string; sunset: string } {
  // RFC 9745: a Structured Fields date, `@` and seconds since the epoch; RFC 8594: an HTTP-date.
  return { deprecation: `@${Math.floor(deprecation.since.getTime() / 1000)}`, sunset: deprecation.sunset.toUTCString() };
}

function deprecationLinks(deprecation: Deprecation, requestTarget: string): string[] {
  const links = [linkValue(deprecation.documentation, 'deprecation', { type: 'text/html' }), linkValue(deprecation.documentation, 'sunset', { type: 'text/html' })];
  if (deprecation.successor) links.push(linkValue(linkTarget(deprecation.successor(requestTarget)), 'successor-version'));
  return links;
}

/**
 * For a route whose config names a deprecation: every answer, problems included, carries `Deprecation`,
 * `Sunset` and the links (after the pages' own, on a list), and the document marks the operation
 * `deprecated: true` with those headers declared on its successful answers. Its problem answers stay
 * the shared components/responses (which cannot carry one operation's headers): they carry the
 * headers all the same, as the operation's description and docs/compatibility.md say.
 */
export function announceDeprecation(route: RouteOptions): void {
  const deprecation = route.config?.deprecation;
  if (!deprecation) return;
  const fields = deprecationFields(deprecation);
  const announce: onSendHookHandler = (request, reply, payload, done) => {
    reply.headers(fields);
    addLinks(reply, deprecationLinks(deprecation, request.url));
    done(null, payload);
  };
  route.onSend = [...hookList(route.onSend), announce];
  if (!route.schema || route.schema.hide) return;
  route.schema.deprecated = true;
  const headers = {
    deprecation: Type.String({ description: `RFC 9745: when this operation was deprecated, \`${fields.deprecation}\` (${deprecation.since.toISOString().slice(0, 10)}).` }),
    sunset: Type.String({ description: `RFC 8594: from when it may stop being served, \`${fields.sunset}\`. Until then it answers as before.` }),
  };
  const response = route.schema.response as Record<string, { headers?: Record<string, TSchema> } | undefined> | undefined;
  for (const [status, answer] of Object.entries(response ?? {})) {
    if (answer === null || typeof answer !== 'object' || Number(status) >= 400) continue;
    const link = answer.headers?.link as { description?: string } | undefined;
    const linkDescription = `${link?.description ? `${link.description} ` : ''}Also \`rel="deprecation"\` and \`rel="sunset"\` (what to use instead, and until when)${deprecation.successor ? ', and `rel="successor-version"`: the operation that replaces this one' : ''}.`;
    response![status] = { ...answer, headers: { ...answer.headers, ...headers, link: Type.String({ description: linkDescription }) } };
  }
}
