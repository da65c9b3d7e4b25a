import type { Db, Executor } from '../db/database.js';
import { isUniqueViolation } from '../db/errors.js';
import type { Clock } from '../clock.js';
import { isSameRequest, type RequestFingerprint } from './fingerprint.js';
import { completeClaim, deleteClaim, deleteKeyCreatedAt, deleteKeysCreatedBefore, findKey, insertClaim, insertCompleted, takeOverClaim } from './repository.js';

/** How long an in-flight claim holds before it counts as abandoned by a crashed process. */
const CLAIM_LEASE_MS = 60_000;

/** An answer as stored and replayed: only the headers worth replaying. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A claim a request holds: what `complete` needs to store the answer under it. */
export interface IdempotencyClaim {
  orgId: string;
  key: string;
  fingerprint: RequestFingerprint;
  createdAt: string;
  lease: string;
}

export type ClaimOutcome =
  | { kind: 'claimed'; claim: IdempotencyClaim }
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

  async claim(orgId: string, key: string, fingerprint: RequestFingerprint): Promise<ClaimOutcome> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = this.clock.now();
      const lease = new Date(now.getTime() + CLAIM_LEASE_MS).toISOString();
      const createdAt = now.toISOString();
      try {
        await insertClaim(this.db, { org_id: orgId, key, fingerprint: fingerprint.raw, value_fingerprint: fingerprint.value, created_at: createdAt, locked_until: lease });
        return { kind: 'claimed', claim: { orgId, key, fingerprint, createdAt, lease } };
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
      }

      const existing = await findKey(this.db, orgId, key);
      if (!existing) continue; // purged between our insert and select: try again
      if (Date.parse(existing.created_at) + this.ttlMs <= now.getTime()) {
        // Past the replay window the key is free again.
        await deleteKeyCreatedAt(this.db, orgId, key, existing.created_at);
        continue;
      }
      if (!isSameRequest(existing, fingerprint)) return { kind: 'mismatch' };
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
      return (await takeOverClaim(this.db, orgId, key, existing.locked_until, lease))
        ? { kind: 'claimed', claim: { orgId, key, fingerprint, createdAt: existing.created_at, lease } }
        : { kind: 'in_flight' };
    }
    return { kind: 'in_flight' };
  }

  /**
   * Stores the answer: the one way an answer is stored, inside the work's own transaction (pass it as
   * `executor`) or after the work committed (the default). Skipped if the claim was taken over
   * meanwhile (its lease no longer ours). On SQLite the claim returned before its group committed;
   * should that group have failed, the claim is gone while the work it guarded committed later: the
   * answer is then inserted afresh, so later retries replay it (one arriving before this point would
   * have run the work again: docs/architecture.md).
   * Two statements rather than one upsert: the upsert measured slower, and the common case runs only
   * the UPDATE.
   */
  async complete(claim: IdempotencyClaim, response: StoredResponse, executor: Executor = this.db): Promise<void> {
    const answer = { response_status: response.status, response_headers: JSON.stringify(response.headers), response_body: response.body };
    const updated = await completeClaim(executor, { org_id: claim.orgId, key: claim.key, locked_until: claim.lease, ...answer });
    if (Number(updated.numAffectedRows ?? 0) > 0) return;
    // Not ours any more: taken over by another request (its row stays), or gone with a failed group.
    await insertCompleted(executor, {
      org_id: claim.orgId,
      key: claim.key,
      fingerprint: claim.fingerprint.raw,
      value_fingerprint: claim.fingerprint.value,
      created_at: claim.createdAt,
      locked_until: claim.lease,
      ...answer,
    });
  }

  /** Forgets a claim whose request failed on our side, so the client's retry runs again. */
  async release(claim: IdempotencyClaim): Promise<void> {
    await deleteClaim(this.db, claim.orgId, claim.key, claim.lease);
  }

  async purgeExpired(): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - this.ttlMs).toISOString();
    return deleteKeysCreatedBefore(this.db, cutoff);
  }
}
