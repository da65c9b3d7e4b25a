import type { FastifyReply, FastifyRequest } from 'fastify';
import { errors } from './errors.js';

/** Strong entity tag from a row's version counter. */
export function etagFor(version: number): string {
  return `"${version}"`;
}

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

export function assertVersion(accepted: number[] | undefined, actual: number, what: string): void {
  if (accepted !== undefined && !accepted.includes(actual)) {
    throw errors.preconditionFailed(`${what} has changed since you read it (current ETag ${etagFor(actual)}). Fetch it again and retry.`);
  }
}
