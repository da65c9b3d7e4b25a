import type { FastifyReply, FastifyRequest } from 'fastify';
import { etagFor } from '../db/versioned-rows.js';

export function setEtag(reply: FastifyReply, version: number): void {
  reply.header('etag', etagFor(version));
}

/**
 * The versions `If-Match` accepts, or undefined when the client sent none (or `*`).
 * Tags that are not ours can never match, so they end in a 412 like any stale one.
 */
export function acceptedVersions(request: FastifyRequest): number[] | undefined {
  const header = request.headers['if-match'];
  if (header === undefined || header.trim() === '*') return undefined;
  return header
    .split(',')
    .map((tag) => /^"(\d{1,15})"$/.exec(tag.trim())?.[1])
    .filter((v): v is string => v !== undefined)
    .map(Number);
}

/** Whether `If-None-Match` names `etag` (or is `*`): a GET then answers 304. Weak comparison (RFC 9110, 13.1.2). */
export function noneMatchHits(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}
