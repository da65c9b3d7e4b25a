import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Tx } from '../db/database.js';
import type { InTransaction } from '../idempotency/in-transaction.js';
import { etagFor } from '../db/versioned-rows.js';
import type { StoredResponse } from '../idempotency/store.js';
import type { HeldClaim } from './idempotency-hooks.js';

/** What a handler answers with: built before anything is set on the reply, so a failed transaction leaves none of it behind. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** What `answerInTransaction` gives a handler. */
export interface TransactionalAnswer<T> {
  /** For the service: run as the last step of its transaction. Undefined without an Idempotency-Key. */
  within: InTransaction<T> | undefined;
  /** Sends the answer: the bytes stored inside the transaction, or `respond(result)` without a claim. */
  send(result: T): FastifyReply;
}

/**
 * The answer of a create: 201 with the resource's `ETag` and `Location` (`collectionPath/id`), and
 * `present(resource)` as the body, stored inside the create's transaction (`answerInTransaction`).
 */
export function answerCreated<T extends { id: string; version: number }>(
  request: FastifyRequest,
  reply: FastifyReply,
  collectionPath: string,
  present: (resource: T) => unknown = (resource) => resource,
): TransactionalAnswer<T> {
  return answerInTransaction(request, reply, (resource: T) => ({
    status: 201,
    headers: { etag: etagFor(resource.version), location: `${collectionPath}/${resource.id}` },
    body: present(resource),
  }));
}

/**
 * Stores an idempotent request's answer inside the work's own transaction, so that the work and its
 * answer commit together. With the answer written after the work had committed (the `onSend` hook, still
 * the path of every route that does not use this), a process killed between the two commits left a
 * claim without an answer, and the client's retry ran the work a second time once the claim's 60 s lease
 * had run out; here a retry finds the answer whenever it finds the work. On SQLite it also spares the
 * request a second group commit to wait for. Both paths store through the same `IdempotencyStore.complete`.
 *
 * `respond` builds the answer from the service's result without touching the reply. Inside the
 * transaction (once per attempt, when a service retries an optimistic write) its body is serialized by the
 * route's own response serializer for that status, so the stored bytes are the bytes sent. If the
 * transaction fails, nothing was stored, nothing was set on the reply, and the `onSend` hook handles the
 * error answer as for any other request.
 */
export function answerInTransaction<T>(request: FastifyRequest, reply: FastifyReply, respond: (result: T) => Answer): TransactionalAnswer<T> {
  const sendFresh = (result: T): FastifyReply => {
    const answer = respond(result);
    return reply.code(answer.status).headers(answer.headers).send(answer.body);
  };
  const held: HeldClaim | undefined = request.idempotency;
  if (!held) return { within: undefined, send: sendFresh };
  let stored: StoredResponse | undefined;
  /** The answer as stored and replayed, its body written by the route's own serializer for its status. */
  const storedResponse = (result: T): StoredResponse => {
    const answer = respond(result);
    // The route's response serializer for this status: a JSON serializer, whose output is a string.
    const body = String(reply.serializeInput(answer.body as Record<string, unknown>, String(answer.status)));
    // The content type Fastify sets when it serializes a payload itself: stored with the answer and replayed.
    return { status: answer.status, headers: { 'content-type': JSON_CONTENT_TYPE, ...answer.headers }, body };
  };
  const runInTransaction = async (tx: Tx, result: T) => {
    const response = storedResponse(result);
    await held.store.complete(held.claim, response, tx);
    stored = response;
  };
  // A deferred claim can also be the answer's row in a service's one-statement write.
  const claim: InTransaction<T>['claim'] = held.claim.deferred
    ? {
        row: (result) => {
          stored = storedResponse(result);
          return held.store.claimRow(held.claim, stored);
        },
        taken: () => held.store.answeredMeanwhile(held.claim),
      }
    : undefined;
  return {
    within: Object.assign(runInTransaction, claim ? { claim } : {}),
    send: (result) => {
      // A service that returned without running `within` stored nothing: fall back to onSend's path.
      if (!stored) return sendFresh(result);
      held.answeredInTransaction = true;
      return reply.code(stored.status).headers(stored.headers).send(stored.body);
    },
  };
}

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
