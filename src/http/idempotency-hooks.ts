import type { FastifyInstance, FastifyReply, FastifyRequest, onErrorHookHandler, onSendHookHandler, preHandlerAsyncHookHandler, RouteHandlerMethod } from 'fastify';
import { AppError, type ErrorCode } from '../errors.js';
import { requestFingerprint, streamedRequestFingerprint, type RequestFingerprint } from '../idempotency/fingerprint.js';
import { KeyAnsweredMeanwhile, type ClaimOutcome, type IdempotencyClaim, type IdempotencyStore } from '../idempotency/store.js';
import { toAppError } from './errors.js';
import { hookList } from './route-hooks.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The handler stores its idempotent answer inside its work's transaction (`answerCreated`,
     * `answerInTransaction`), so on PostgreSQL the key is claimed there too (IdempotencyStore.defersClaims).
     */
    answersInTransaction?: boolean;
  }
  interface FastifyRequest {
    /** The exact body bytes as text, kept for idempotency fingerprints. */
    rawBody?: string;
    /** The Idempotency-Key claim this request holds, from the preHandler until its answer is stored. */
    idempotency?: HeldClaim;
    /** A key not claimed yet because the body is streamed (see claimAfterStreamedBody). */
    unclaimedIdempotencyKey?: KeyToClaim;
  }
  interface FastifyContextConfig {
    /**
     * The handler reads the body as a stream: the key is claimed once it has read it, with a
     * fingerprint covering its bytes (claimAfterStreamedBody), not before the handler.
     */
    streamedBody?: boolean;
  }
}

/** An Idempotency-Key a request sent, in its organization, and the store to claim it in. */
interface KeyToClaim {
  readonly orgId: string;
  readonly key: string;
  readonly store: IdempotencyStore;
}

/** The Idempotency-Key claim a request holds, and what its answer path has learnt about it so far. */
export interface HeldClaim {
  readonly claim: IdempotencyClaim;
  readonly store: IdempotencyStore;
  /** Stored inside the work's own transaction (`answerInTransaction`): nothing left for onSend. */
  answeredInTransaction: boolean;
  /** The code of the error the request is answered with, recorded before the error is rendered. */
  errorCode: ErrorCode | undefined;
}

export const IDEMPOTENCY_HEADER = 'idempotency-key';
const MAX_KEY_LENGTH = 255;
/** Response headers worth replaying; the rest (date, request id) describe the new exchange. */
const REPLAYED_HEADERS = ['content-type', 'location', 'etag'];

/**
 * Makes every authenticated POST idempotent when the client sends `Idempotency-Key`.
 * Runs after authentication and validation, so the key is scoped to the caller's organization
 * and a request that never reached a handler leaves no trace.
 */
export function installIdempotency(app: FastifyInstance, store: IdempotencyStore): void {
  const claimBeforeWork: preHandlerAsyncHookHandler = async (request, reply) => {
    if (!request.principal) return;
    const key = request.headers[IDEMPOTENCY_HEADER];
    if (key === undefined) return;
    if (typeof key !== 'string' || key.length === 0 || key.length > MAX_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key)) {
      throw new AppError('invalid_idempotency_key', `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} visible ASCII characters; a UUID is recommended.`, {
        errors: [{ field: 'header.idempotency-key', message: `must be 1 to ${MAX_KEY_LENGTH} visible ASCII characters` }],
      });
    }
    const toClaim = { orgId: request.principal.orgId, key, store };
    if (request.routeOptions.config.streamedBody) {
      request.unclaimedIdempotencyKey = toClaim;
      return;
    }
    const fingerprint = requestFingerprint(request);
    if (store.defersClaims && request.routeOptions.config.answersInTransaction) {
      request.idempotency = { claim: store.claimAtWrite(request.principal.orgId, key, fingerprint), store, answeredInTransaction: false, errorCode: undefined };
      return;
    }
    await claimKey(request, reply, toClaim, fingerprint);
  };

  // Runs before the error handler renders the error: onSend then knows its code without reading the bytes.
  const noteErrorCode: onErrorHookHandler = (request, _reply, error, done) => {
    const held = request.idempotency;
    if (held) held.errorCode = toAppError(error)?.code;
    done();
  };

  // A callback hook: most answers (no key, or one stored in the work's own transaction) need nothing here.
  const storeAfterWork: onSendHookHandler = (request, reply, payload, done) => {
    const held = request.idempotency;
    if (!held) return done(null, payload);
    request.idempotency = undefined;
    if (held.answeredInTransaction) return done(null, payload);
    storeAnswer(held, reply, payload).then(
      () => done(null, payload),
      (error: unknown) => done(error as Error),
    );
  };

  // Only POSTs are made idempotent, so only POST routes carry the hooks: a GET (most of what
  // integrators send) no longer pays for three hooks and a promise that return at once. Each goes first
  // among the route's own hooks, which run after every app-wide one, as it ran when it was app-wide:
  // the answer is stored before compression (a route hook too) encodes it.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.includes('POST')) return;
    route.preHandler = [claimBeforeWork, ...hookList(route.preHandler)];
    route.onError = [noteErrorCode, ...hookList(route.onError)];
    route.onSend = [storeAfterWork, ...hookList(route.onSend)];
  });

  // A key claimed by the work's own write (claimAtWrite) was not looked at before the work. If the write
  // found it taken, the work rolled back; if the work failed before writing, its error may not be the
  // answer. Either way the request answers from the key's stored answer when there is one, as if it had
  // arrived after it. A key that holds nothing to replay (past the replay window, a claim in flight) is
  // claimed the ordinary way, and the work runs once more under that claim.
  app.addHook('onRoute', (route) => {
    if (!route.config?.answersInTransaction) return;
    const handler = route.handler as (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
    route.handler = async function (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
      try {
        return await handler.call(this, request, reply);
      } catch (error) {
        const held = request.idempotency;
        if (!held?.claim.deferred) throw error;
        const taken = error instanceof KeyAnsweredMeanwhile ? error : await keyTakenBeforeFailure(held, error);
        if (!taken) throw error;
        request.idempotency = undefined;
        if (taken.outcome.kind !== 'unanswered') return answerWithoutWork(reply, taken.outcome);
        const { orgId, key, fingerprint } = held.claim;
        await claimKey(request, reply, { orgId, key, store }, fingerprint);
        if (reply.sent) return reply;
        return await handler.call(this, request, reply);
      }
    } as RouteHandlerMethod;
  });

  async function storeAnswer(held: HeldClaim, reply: FastifyReply, payload: unknown): Promise<void> {
    // @NOTE: server errors and transient refusals are not stored, so a retry gets a fresh chance
    // instead of the same failure for 24 hours.
    if (typeof payload !== 'string' || isTransientAnswer(reply.statusCode, held.errorCode)) {
      await store.release(held.claim);
      return;
    }
    await store.complete(held.claim, { status: reply.statusCode, headers: replayedHeaders(reply), body: payload });
  }
}

/**
 * For a request whose work failed before its write claimed its key: how the key is held, or undefined
 * when it is free (the error is then the answer, stored by onSend). A transient failure is answered
 * as it is (it is never stored), and so is any failure when the key cannot be read either.
 */
async function keyTakenBeforeFailure(held: HeldClaim, error: unknown): Promise<KeyAnsweredMeanwhile | undefined> {
  const failure = toAppError(error);
  if (!failure || isTransientAnswer(failure.status, failure.code)) return undefined;
  return held.store.keyHolder(held.claim).catch(() => undefined);
}

/** Claims `key` for this request: held (request.idempotency), replayed (the answer is sent), or refused. */
async function claimKey(request: FastifyRequest, reply: FastifyReply, { orgId, key, store }: KeyToClaim, fingerprint: RequestFingerprint): Promise<void> {
  const outcome = await store.claim(orgId, key, fingerprint);
  if (outcome.kind === 'claimed') {
    request.idempotency = { claim: outcome.claim, store, answeredInTransaction: false, errorCode: undefined };
    return;
  }
  answerWithoutWork(reply, outcome);
}

/** The answer to a request whose key is already taken: a replay (sent), or a refusal (thrown). */
function answerWithoutWork(reply: FastifyReply, outcome: Exclude<ClaimOutcome, { kind: 'claimed' }>): FastifyReply {
  switch (outcome.kind) {
    case 'mismatch':
      throw new AppError('idempotency_key_mismatch', 'This Idempotency-Key was already used with a different method, path or body. Use a new key for a new operation.');
    case 'in_flight':
      throw new AppError('idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed. Retry after it finishes.', {
        headers: { 'retry-after': '1' },
      });
    case 'replay':
      reply.code(outcome.response.status).headers(outcome.response.headers).header('x-idempotent-replay', 'true');
      return reply.send(outcome.response.body);
  }
}

/**
 * For a route with `config.streamedBody`: claims the request's Idempotency-Key now that the handler
 * has read the body, with a fingerprint of method, URL, media type and the body's SHA-256. True when
 * the request is a retry whose answer was just replayed: the handler must drop its work and return.
 * Refusals (409 still in flight, 422 another body) are thrown, as the hook would.
 */
export async function claimAfterStreamedBody(request: FastifyRequest, reply: FastifyReply, mediaType: string, bodySha256: string): Promise<boolean> {
  const unclaimed = request.unclaimedIdempotencyKey;
  if (!unclaimed) return false;
  request.unclaimedIdempotencyKey = undefined;
  await claimKey(request, reply, unclaimed, streamedRequestFingerprint(request.method, request.url, mediaType, bodySha256));
  return reply.sent;
}

/**
 * Whether an answer says "try again" rather than "this was the outcome": a 5xx, a 429, or a 409
 * `conflict` (a concurrent write won). `errorCode` is the code of the error answered, if any.
 */
export function isTransientAnswer(status: number, errorCode: ErrorCode | undefined): boolean {
  return status >= 500 || status === 429 || (status === 409 && errorCode === 'conflict');
}

function replayedHeaders(reply: FastifyReply): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = reply.getHeader(name);
    if (value !== undefined) headers[name] = String(value);
  }
  return headers;
}
