import type { Db, Executor } from '../db/database.js';
import { isUniqueViolation } from '../db/errors.js';
import type { Clock } from '../clock.js';
import type { IdempotencyKeysTable } from './tables.js';
import type { AppendConditions } from '../db/row-appends.js';
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
  /** No row yet: the answer's insert, inside the work's transaction, will be the claim (defersClaims). */
  deferred?: boolean;
}

export type ClaimOutcome =
  | { kind: 'claimed'; claim: IdempotencyClaim }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'mismatch' }
  | { kind: 'in_flight' };

/**
 * What a request answers when its write found its key taken: the stored answer (replay or mismatch),
 * or, when the key holds nothing to replay (an answer past the replay window, a claim still in flight
 * or abandoned by a crashed process, a row gone meanwhile), `unanswered`: the key is then claimed the
 * ordinary way (`claim`), which sorts those cases out, before the work runs again.
 */
export type TakenKeyOutcome = Exclude<ClaimOutcome, { kind: 'claimed' }> | { kind: 'unanswered' };

/**
 * Thrown when a claim made at the work's write (claimAtWrite) finds its key already taken, before
 * the work or while it ran: the work rolls back (it is not done twice) and the request is answered
 * with `outcome` instead (a replay of the stored answer, a mismatch, or a claim the ordinary way).
 */
export class KeyAnsweredMeanwhile extends Error {
  override name = 'KeyAnsweredMeanwhile';
  constructor(readonly outcome: TakenKeyOutcome) {
    super('another request with this Idempotency-Key holds it');
  }
}

/**
 * Idempotency keys in the database (IETF httpapi-idempotency-key-header + Stripe's semantics).
 * The primary key (org, key) is the only coordination needed between API processes.
 */
export class IdempotencyStore {
  /**
   * `defersClaims`: whether a request whose answer is stored inside its work's transaction claims its key there too,
   * instead of in a commit of its own beforehand (PostgreSQL). The claim is then the answer's own
   * insert: one commit per idempotent create instead of two, and a process that dies mid-request
   * leaves no claim behind, since its transaction dies with its session. A second request with the
   * same key meanwhile waits on the first's uncommitted row at that insert, then replays its answer
   * (or, if the first rolled back, goes on). SQLite keeps the claim up front: its claim costs no
   * commit of its own (returnBeforeCommit), and its one writer has nothing to wait on.
   */
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly ttlMs: number,
    readonly defersClaims: boolean,
  ) {}

  /**
   * PostgreSQL, for a request whose answer is stored by its work's own write (`defersClaims`): the key,
   * claimed by that write, with nothing read or written now. The answer's insert is strict: a key
   * already present fails the write, which rolls back, and the request answers from the stored row
   * instead (`answeredMeanwhile`). A fresh key, the common case, thus costs no round trip before the
   * work; a retry pays a failed write and one read. Reading the key first was a large share of an
   * idempotent create's API CPU (bench/analysis.md, session 15).
   */
  claimAtWrite(orgId: string, key: string, fingerprint: RequestFingerprint): IdempotencyClaim {
    const now = this.clock.now();
    const lease = new Date(now.getTime() + CLAIM_LEASE_MS).toISOString();
    return { orgId, key, fingerprint, createdAt: now.toISOString(), lease, deferred: true };
  }

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
      if (existing.state === 'completed') return answeredOutcome(existing, fingerprint);
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
    if (!claim.deferred) {
      const updated = await completeClaim(executor, { org_id: claim.orgId, key: claim.key, locked_until: claim.lease, ...answer });
      if (Number(updated.numAffectedRows ?? 0) > 0) return;
    }
    // A deferred claim has no row yet; any other claim is not ours any more: taken over by another
    // request (its row stays), or gone with a failed group.
    const inserted = await insertCompleted(executor, {
      org_id: claim.orgId,
      key: claim.key,
      fingerprint: claim.fingerprint.raw,
      value_fingerprint: claim.fingerprint.value,
      created_at: claim.createdAt,
      locked_until: claim.lease,
      ...answer,
    });
    if (claim.deferred && executor.isTransaction && Number(inserted.numAffectedRows ?? 0) === 0) {
      // The key was there before our work, or another request with it committed while our work ran
      // (this insert waited for it). Under READ COMMITTED this statement sees its row; throwing rolls
      // our work back.
      throw new KeyAnsweredMeanwhile(this.takenKeyOutcome(await findKey(executor, claim.orgId, claim.key), claim.fingerprint));
    }
  }

  /**
   * A deferred claim as a row to insert in the work's own statement (RowAppends.writeIf): the stored
   * answer, inserted only if no other request holds the key, as `complete` would.
   */
  claimRow(claim: IdempotencyClaim, response: StoredResponse): NonNullable<AppendConditions['claim']> {
    const row: IdempotencyKeysTable = {
      org_id: claim.orgId,
      key: claim.key,
      fingerprint: claim.fingerprint.raw,
      value_fingerprint: claim.fingerprint.value,
      state: 'completed',
      response_status: response.status,
      response_headers: JSON.stringify(response.headers),
      response_body: response.body,
      created_at: claim.createdAt,
      locked_until: claim.lease,
    };
    return { table: 'idempotency_keys', row: row as unknown as Record<string, unknown> };
  }

  /** What a request answers when the statement that was to claim its key found it taken (see TakenKeyOutcome). */
  async answeredMeanwhile(claim: IdempotencyClaim): Promise<KeyAnsweredMeanwhile> {
    return (await this.keyHolder(claim)) ?? new KeyAnsweredMeanwhile({ kind: 'unanswered' });
  }

  /** How the claim's key is held now (see TakenKeyOutcome), or undefined when nothing holds it. */
  async keyHolder(claim: IdempotencyClaim): Promise<KeyAnsweredMeanwhile | undefined> {
    const existing = await findKey(this.db, claim.orgId, claim.key);
    return existing && new KeyAnsweredMeanwhile(this.takenKeyOutcome(existing, claim.fingerprint));
  }

  private takenKeyOutcome(existing: IdempotencyKeysTable | undefined, fingerprint: RequestFingerprint): TakenKeyOutcome {
    if (!existing || existing.state !== 'completed' || Date.parse(existing.created_at) + this.ttlMs <= this.clock.now().getTime()) return { kind: 'unanswered' };
    return answeredOutcome(existing, fingerprint);
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

/** The outcome for a key already answered: the same request replays, another one is a mismatch. */
function answeredOutcome(existing: IdempotencyKeysTable, fingerprint: RequestFingerprint): Exclude<ClaimOutcome, { kind: 'claimed' }> {
  if (!isSameRequest(existing, fingerprint)) return { kind: 'mismatch' };
  if (existing.state !== 'completed') return { kind: 'in_flight' };
  return {
    kind: 'replay',
    response: {
      status: existing.response_status ?? 200,
      headers: JSON.parse(existing.response_headers ?? '{}') as Record<string, string>,
      body: existing.response_body ?? '',
    },
  };
}
