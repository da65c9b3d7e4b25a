import type { FastifyRequest } from 'fastify';
import type { MetadataPatchMode } from '../metadata.js';

/**
 * How a PATCH's `metadata` applies, from the body's media type: `application/merge-patch+json` is RFC
 * 7396 (members merged, `null` removes one), plain JSON replaces the object whole. The other fields
 * behave the same under both: a member sent is set, `null` clears a nullable one.
 */
export function metadataPatchMode(request: FastifyRequest): MetadataPatchMode {
  return isMergePatch(request) ? 'merge' : 'replace';
}

/** Whether the body is sent as `application/merge-patch+json` (RFC 7396), parameters aside. */
export function isMergePatch(request: Pick<FastifyRequest, 'headers'>): boolean {
  return request.headers['content-type']?.split(';', 1)[0]!.trim().toLowerCase() === 'application/merge-patch+json';
}
