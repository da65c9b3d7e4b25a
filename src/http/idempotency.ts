import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Db } from '../db/database.js';
import { preparedQuery } from '../db/prepared.js';
import { isUniqueViolation } from '../db/errors.js';
import type { Clock } from '../clock.js';
import { AppError } from './errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The exact body bytes as text, kept for idempotency fingerprints. */
    rawBody?: string;
    idempotencyClaim?: { orgId: string; key: string; lease: string };
  }
}

export const IDEMPOTENCY_HEADER = 'idempotency-key';
const MAX_KEY_LENGTH = 255;
/** How long an in-flight claim holds before it counts as abandoned by a crashed process. */
const CLAIM_LEASE_MS = 60_000;
/** Response headers worth replaying; the rest (date, request id) describe the new exchange. */
const REPLAYED_HEADERS = ['content-type', 'location', 'etag'];

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type ClaimOutcome =
  | { kind: 'claimed'; lease: string }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'mismatch' }
  | { kind: 'in_flight' };

/**
 * Idempotency keys in the database (IETF httpapi-idempotency-key-header + Stripe's semantics).
 * The primary key (org, key) is the only coordination needed between API processes.
 */
export class IdempotencyStore {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly ttlMs: number,
  ) {}

  async claim(orgId: string, key: string, fingerprint: string): Promise<ClaimOutcome> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = this.clock.now();
      const lease = new Date(now.getTime() + CLAIM_LEASE_MS).toISOString();
      try {
        await insertClaimQuery(this.db, { org_id: orgId, key, fingerprint, created_at: now.toISOString(), locked_until: lease });
        return { kind: 'claimed', lease };
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
      }

      const existing = await this.db
        .selectFrom('idempotency_keys')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('key', '=', key)
        .executeTakeFirst();
      if (!existing) continue; // purged between our insert and select: try again
      if (Date.parse(existing.created_at) + this.ttlMs <= now.getTime()) {
        // Past the replay window the key is free again.
        await this.db
          .deleteFrom('idempotency_keys')
          .where('org_id', '=', orgId)
          .where('key', '=', key)
          .where('created_at', '=', existing.created_at)
          .execute();
        continue;
      }
      if (existing.fingerprint !== fingerprint) return { kind: 'mismatch' };
      if (existing.state === 'completed') {
        return {
          kind: 'replay',
          response: {
            status: existing.response_status ?? 200,
            headers: JSON.parse(existing.response_headers ?? '{}') as Record<string, string>,
            body: existing.response_body ?? '',
          },
        };
      }
      if (existing.locked_until > now.toISOString()) return { kind: 'in_flight' };
      // The process holding the claim died: take the claim over, unless another request just did.
      const taken = await this.db
        .updateTable('idempotency_keys')
        .set({ locked_until: lease })
        .where('org_id', '=', orgId)
        .where('key', '=', key)
        .where('locked_until', '=', existing.locked_until)
        .where('state', '=', 'in_flight')
        .executeTakeFirst();
      return Number(taken.numUpdatedRows) === 1 ? { kind: 'claimed', lease } : { kind: 'in_flight' };
    }
    return { kind: 'in_flight' };
  }

  /** Stores the answer, unless the claim was taken over meanwhile (its lease no longer ours). */
  async complete(orgId: string, key: string, lease: string, response: StoredResponse): Promise<void> {
    await completeQuery(this.db, {
      orgId,
      key,
      lease,
      status: response.status,
      headers: JSON.stringify(response.headers),
      body: response.body,
    });
  }

  /** Forgets a claim whose request failed on our side, so the client's retry runs again. */
  async release(orgId: string, key: string, lease: string): Promise<void> {
    await this.db
      .deleteFrom('idempotency_keys')
      .where('org_id', '=', orgId)
      .where('key', '=', key)
      .where('state', '=', 'in_flight')
      .where('locked_until', '=', lease)
      .execute();
  }

  async purgeExpired(): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - this.ttlMs).toISOString();
    const result = await this.db.deleteFrom('idempotency_keys').where('created_at', '<', cutoff).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

// Every idempotent POST runs these two: compiled once (see preparedQuery).
const insertClaimQuery = preparedQuery(
  (db, claim: { org_id: string; key: string; fingerprint: string; created_at: string; locked_until: string }) =>
    db.insertInto('idempotency_keys').values({ ...claim, state: 'in_flight', response_status: null, response_headers: null, response_body: null }),
);

const completeQuery = preparedQuery(
  (db, p: { orgId: string; key: string; lease: string; status: number; headers: string; body: string }) =>
    db
      .updateTable('idempotency_keys')
      .set({ state: 'completed', response_status: p.status, response_headers: p.headers, response_body: p.body })
      .where('org_id', '=', p.orgId)
      .where('key', '=', p.key)
      .where('state', '=', 'in_flight')
      .where('locked_until', '=', p.lease),
);

export function requestFingerprint(request: FastifyRequest): string {
  return createHash('sha256')
    .update(`${request.method}\n${request.url}\n`)
    .update(request.rawBody ?? '')
    .digest('hex');
}

/**
 * Makes every authenticated POST idempotent when the client sends `Idempotency-Key`.
 * Runs after authentication and validation, so the key is scoped to the caller's organization
 * and a request that never reached a handler leaves no trace.
 */
export function installIdempotency(app: FastifyInstance, store: IdempotencyStore): void {
  app.addHook('preHandler', async (request, reply) => {
    if (request.method !== 'POST' || !request.principal) return;
    const key = request.headers[IDEMPOTENCY_HEADER];
    if (key === undefined) return;
    if (typeof key !== 'string' || key.length === 0 || key.length > MAX_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key)) {
      throw new AppError('invalid_idempotency_key', `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} visible ASCII characters; a UUID is recommended.`, {
        errors: [{ field: 'header.idempotency-key', message: `must be 1 to ${MAX_KEY_LENGTH} visible ASCII characters` }],
      });
    }
    const orgId = request.principal.orgId;
    const outcome = await store.claim(orgId, key, requestFingerprint(request));
    switch (outcome.kind) {
      case 'claimed':
        request.idempotencyClaim = { orgId, key, lease: outcome.lease };
        return;
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
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const claim = request.idempotencyClaim;
    if (!claim) return payload;
    request.idempotencyClaim = undefined;
    // @NOTE: server errors and transient refusals are not stored, so a retry gets a fresh chance
    // instead of the same failure for 24 hours.
    if (typeof payload !== 'string' || isTransientFailure(reply.statusCode, payload)) {
      await store.release(claim.orgId, claim.key, claim.lease);
      return payload;
    }
    const headers: Record<string, string> = {};
    for (const name of REPLAYED_HEADERS) {
      const value = reply.getHeader(name);
      if (value !== undefined) headers[name] = String(value);
    }
    await store.complete(claim.orgId, claim.key, claim.lease, { status: reply.statusCode, headers, body: payload });
    return payload;
  });

}

/** 5xx, 429, and a 409 `conflict` (a concurrent write won) say "try again", not "this was the outcome". */
function isTransientFailure(status: number, payload: string): boolean {
  if (status >= 500 || status === 429) return true;
  if (status !== 409) return false;
  try {
    return (JSON.parse(payload) as { code?: string }).code === 'conflict';
  } catch {
    return false;
  }
}
