import { createPublicKey, verify } from 'node:crypto';
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Db } from '../db/database.js';
import type { Clock } from '../clock.js';
import { parseSignedCheckpoint } from './checkpoint.js';
import { cosignatureMessage, isByCosigner, readTimestampedSignature } from './cosignature.js';
import { toBase64Url } from './encoding.js';
import { listWitnessStates, saveWitnessState } from './repository.js';
import type { TransparencyLog } from './transparency-log.js';
import { quorumMet, type PolicyWitness, type WitnessPolicy } from './witness-policy.js';

/**
 * Submits each new checkpoint to the witnesses of the policy (C2SP tlog-witness `add-checkpoint`), in
 * parallel and each with a timeout, and publishes it once their cosignatures make the quorum — or,
 * with WO_WITNESS_FAIL_OPEN, once a round ended without it, flagged unwitnessed. Sealing never waits
 * for any of it: a witness that is down delays only the delivery of proofs (without fail-open).
 *
 * Nothing lives only in memory: a checkpoint's cosignatures are stored on its row as they come, the
 * size each witness holds in `tlog_witnesses`, and a restarted process finds the unpublished checkpoint
 * again (the latest sealed one is all it submits: a witness needs no intermediate checkpoints).
 */

const MAX_CONFLICT_RETRIES = 3;
/**
 * Statements one publication delivers at most (about: whole checkpoints): after a long witness outage
 * the backlog is published checkpoint by checkpoint, each transaction bounded as a seal's is.
 */
const MAX_PUBLISHED_AT_ONCE = 10_000;
const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 30_000;

/** A policy whose every witness has the URL of its submission prefix. */
export type SubmittingPolicy = Omit<WitnessPolicy, 'witnesses'> & { witnesses: Array<PolicyWitness & { url: string }> };

export interface WitnessHealth {
  name: string;
  url: string;
  /** Its last submission succeeded. */
  up: boolean;
  cosignedSize: number | null;
  failures: number;
  lastSuccessAt: string | null;
  lastError: string | null;
}

interface WitnessState {
  cosignedSize: number | null;
  failures: number;
  lastAttemptAt: string | null;
  lastSuccessAt: string | null;
  lastError: string | null;
  nextAttemptAt: number;
  busy: boolean;
}

export interface WitnessingOptions {
  timeoutMs: number;
  failOpen: boolean;
  /** How long to wait when there is nothing to submit (a seal in this process wakes the loop sooner). */
  idleMs: number;
  /** Statements one publication delivers at most (MAX_PUBLISHED_AT_ONCE). */
  maxPublishedAtOnce?: number;
}

class WitnessMetrics {
  readonly up;
  readonly cosignedSize;
  readonly submissions;
  readonly published;
  readonly publishedSize;

  constructor(registry: Registry) {
    const registers = [registry];
    this.up = new Gauge({ name: 'wo_witness_up', help: 'Whether the last submission to a witness of the policy succeeded (1) or failed (0)', labelNames: ['witness'], registers });
    this.cosignedSize = new Gauge({ name: 'wo_witness_cosigned_tree_size', help: 'Size of the latest checkpoint a witness cosigned, as this process last learned it', labelNames: ['witness'], registers });
    this.submissions = new Counter({ name: 'wo_witness_submissions_total', help: 'Checkpoint submissions to witnesses by outcome (cosigned, conflict, refused, failed)', labelNames: ['witness', 'outcome'], registers });
    this.published = new Counter({ name: 'wo_proof_checkpoints_published_total', help: 'Checkpoints this process published, witnessed or (fail-open) unwitnessed', labelNames: ['publication'], registers });
    this.publishedSize = new Gauge({ name: 'wo_proof_published_tree_size', help: 'Size of the latest checkpoint this process published', registers });
  }
}

function ed25519PublicKey(raw: Uint8Array) {
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: toBase64Url(raw) }, format: 'jwk' });
}

/** The witness names whose cosignature lines in `lines` verify on `body`, with their cosignature times. */
export function verifiedCosignatures(policy: WitnessPolicy, body: string, lines: string): Map<string, number> {
  const found = new Map<string, number>();
  const note = parseSignedCheckpoint(`${body}\n${lines}`);
  if (typeof note === 'string') return found;
  for (const witness of policy.witnesses) {
    for (const line of note.signatures.filter((signature) => isByCosigner(signature, witness.key))) {
      const read = readTimestampedSignature(line.signature);
      // tlog-witness: a cosignature on a checkpoint never omits its timestamp (0).
      if (read && read.timestamp > 0 && verify(null, cosignatureMessage(body, read.timestamp), ed25519PublicKey(witness.key.publicKey), read.signature)) {
        found.set(witness.name, Math.min(found.get(witness.name) ?? Infinity, read.timestamp));
      }
    }
  }
  return found;
}

export class CheckpointWitnessing {
  private readonly states = new Map<string, WitnessState>();
  private readonly metrics: WitnessMetrics;
  private loaded = false;
  /** Sizes this process sealed: it submits those; another process's, only once they wait too long. */
  private readonly sealedHere = new Set<number>();
  private firstRound = true;

  constructor(
    private readonly db: Db,
    private readonly log: TransparencyLog,
    readonly policy: SubmittingPolicy,
    private readonly options: WitnessingOptions,
    private readonly clock: Clock,
    private readonly logger: Pick<Logger, 'warn' | 'info'>,
    registry: Registry,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {
    this.metrics = new WitnessMetrics(registry);
  }

  sealed(treeSize: number): void {
    this.sealedHere.add(treeSize);
  }

  private state(witness: PolicyWitness): WitnessState {
    const vkey = witnessVkey(witness);
    let state = this.states.get(vkey);
    if (!state) {
      state = { cosignedSize: null, failures: 0, lastAttemptAt: null, lastSuccessAt: null, lastError: null, nextAttemptAt: 0, busy: false };
      this.states.set(vkey, state);
    }
    return state;
  }

  private async load(): Promise<void> {
    if (this.loaded) return;
    const rows = new Map((await listWitnessStates(this.db)).map((row) => [row.vkey, row]));
    for (const witness of this.policy.witnesses) {
      const row = rows.get(witnessVkey(witness));
      const state = this.state(witness);
      if (row) Object.assign(state, { cosignedSize: row.cosigned_size === null ? null : Number(row.cosigned_size), failures: row.failures, lastAttemptAt: row.last_attempt_at, lastSuccessAt: row.last_success_at, lastError: row.last_error });
    }
    this.loaded = true;
  }

  /** One round; resolves to how long to wait before the next. */
  async step(): Promise<number> {
    await this.load();
    const latest = await this.log.latestSealed();
    const published = await this.log.latestPublished();
    if (!latest || (published && published.treeSize >= Number(latest.tree_size))) return this.options.idleMs;
    // Another process sealed it and submits it; take it over only when it has waited for long.
    const waitedLong = this.clock.now().getTime() - Date.parse(latest.created_at) > 2 * this.options.timeoutMs;
    if (!this.sealedHere.has(Number(latest.tree_size)) && !this.firstRound && !waitedLong) return this.options.idleMs;
    this.firstRound = false;
    // The latest checkpoint, unless that would deliver too many statements in one transaction.
    const sealed = (await this.log.sealedFrom((published?.treeSize ?? 0) + (this.options.maxPublishedAtOnce ?? MAX_PUBLISHED_AT_ONCE))) ?? latest;
    const size = Number(sealed.tree_size);

    const body = sealed.note.slice(0, sealed.note.lastIndexOf('\n\n') + 1);
    const cosigned = verifiedCosignatures(this.policy, body, sealed.cosignatures);
    const now = this.clock.now().getTime();
    const due = this.policy.witnesses.filter((witness) => !cosigned.has(witness.name) && !this.state(witness).busy && this.state(witness).nextAttemptAt <= now);

    if (!quorumMet(this.policy, new Set(cosigned.keys())) && due.length > 0) {
      // Wait for the quorum, not for the slowest witness: the others go on and add their cosignatures later.
      await new Promise<void>((resolve) => {
        let pending = due.length;
        for (const witness of due) {
          void this.submit(witness, sealed.note, size).then((line) => {
            if (line) cosigned.set(witness.name, 0);
            pending--;
            if (pending === 0 || quorumMet(this.policy, new Set(cosigned.keys()))) resolve();
          });
        }
      });
    }
    if (quorumMet(this.policy, new Set(cosigned.keys()))) return this.publish(size, 'witnessed');
    const anyBusy = this.policy.witnesses.some((witness) => this.state(witness).busy);
    if (this.options.failOpen && !anyBusy) {
      this.logger.warn({ treeSize: size, cosigned: [...cosigned.keys()] }, 'publishing a checkpoint without its witness quorum (WO_WITNESS_FAIL_OPEN)');
      return this.publish(size, 'unwitnessed');
    }
    const next = Math.min(...this.policy.witnesses.map((witness) => this.state(witness).nextAttemptAt));
    return Math.max(50, Math.min(next - this.clock.now().getTime(), this.options.idleMs * 4));
  }

  private async publish(size: number, publication: 'witnessed' | 'unwitnessed'): Promise<number> {
    if (await this.log.publish(size, publication)) {
      this.metrics.published.inc({ publication });
      this.metrics.publishedSize.set(size);
      // Sizes up to this one are done; a later one sealed here is still to submit.
      for (const sealed of this.sealedHere) if (sealed <= size) this.sealedHere.delete(sealed);
      return 0;
    }
    // The sequencer holds the claim for a moment (or another process published it): soon again.
    return 20;
  }

  /** Submits the checkpoint to one witness; resolves to its verified cosignature line, or undefined. */
  private async submit(witness: PolicyWitness & { url: string }, note: string, size: number): Promise<string | undefined> {
    const state = this.state(witness);
    state.busy = true;
    state.lastAttemptAt = this.clock.now().toISOString();
    try {
      let old = state.cosignedSize !== null && state.cosignedSize <= size ? state.cosignedSize : 0;
      for (let attempt = 0; attempt <= MAX_CONFLICT_RETRIES; attempt++) {
        const proof = old === 0 || old === size ? [] : await this.log.consistencyProof(old, size);
        const response = await this.fetchImpl(new URL('add-checkpoint', witness.url.endsWith('/') ? witness.url : `${witness.url}/`), {
          method: 'POST',
          headers: { 'content-type': 'text/plain; charset=utf-8' },
          body: `old ${old}\n${proof.map((hash) => `${hash}\n`).join('')}\n${note}`,
          signal: AbortSignal.timeout(this.options.timeoutMs),
        });
        const text = await response.text();
        if (response.status === 409 && (response.headers.get('content-type') ?? '').startsWith('text/x.tlog.size')) {
          // It holds another size: resend from it (tlog-witness), unless it is ahead of this log.
          this.metrics.submissions.inc({ witness: witness.name, outcome: 'conflict' });
          const held = /^(0|[1-9][0-9]*)\n$/.exec(text);
          if (!held || Number(held[1]) > size) return await this.failed(witness, `the witness holds size ${text.trim()}, beyond this log's latest checkpoint (${size}): it has seen another history under this log's key`);
          old = Number(held[1]);
          state.cosignedSize = old;
          continue;
        }
        if (response.status !== 200) {
          this.metrics.submissions.inc({ witness: witness.name, outcome: 'refused' });
          return await this.failed(witness, `answered ${response.status}: ${text.trim().slice(0, 200)}`);
        }
        const body = note.slice(0, note.lastIndexOf('\n\n') + 1);
        const valid = text.split('\n').filter((line) => line !== '').find((line) => verifiedCosignatures({ ...this.policy, witnesses: [witness] }, body, `${line}\n`).has(witness.name));
        if (!valid) return await this.failed(witness, 'answered 200 without a cosignature by its key that verifies');
        await this.log.addCosignatures(size, [`${valid}\n`]);
        Object.assign(state, { cosignedSize: size, failures: 0, lastSuccessAt: this.clock.now().toISOString(), lastError: null, nextAttemptAt: 0 });
        this.metrics.submissions.inc({ witness: witness.name, outcome: 'cosigned' });
        this.metrics.up.set({ witness: witness.name }, 1);
        this.metrics.cosignedSize.set({ witness: witness.name }, size);
        await this.save(witness);
        return `${valid}\n`;
      }
      return await this.failed(witness, `kept answering 409 after ${MAX_CONFLICT_RETRIES} resends`);
    } catch (error) {
      this.metrics.submissions.inc({ witness: witness.name, outcome: 'failed' });
      return await this.failed(witness, (error as Error).name === 'TimeoutError' ? `no answer within ${this.options.timeoutMs} ms` : (error as Error).message);
    } finally {
      state.busy = false;
    }
  }

  private async failed(witness: PolicyWitness, reason: string): Promise<undefined> {
    const state = this.state(witness);
    state.failures++;
    state.lastError = reason;
    const backoff = Math.min(BACKOFF_BASE_MS * 2 ** (state.failures - 1), BACKOFF_CAP_MS);
    state.nextAttemptAt = this.clock.now().getTime() + backoff * (0.8 + Math.random() * 0.4);
    this.metrics.up.set({ witness: witness.name }, 0);
    if (state.failures === 1 || state.failures % 20 === 0) this.logger.warn({ witness: witness.name, url: witness.url, failures: state.failures, reason }, 'a witness did not cosign the checkpoint');
    await this.save(witness).catch(() => undefined);
    return undefined;
  }

  private async save(witness: PolicyWitness): Promise<void> {
    const state = this.state(witness);
    await saveWitnessState(this.db, {
      vkey: witnessVkey(witness),
      name: witness.name,
      cosigned_size: state.cosignedSize,
      last_attempt_at: state.lastAttemptAt,
      last_success_at: state.lastSuccessAt,
      failures: state.failures,
      last_error: state.lastError,
    });
  }

  /** Per witness, as stored (the same in every process): for /readyz. */
  async health(): Promise<WitnessHealth[]> {
    const rows = new Map((await listWitnessStates(this.db)).map((row) => [row.vkey, row]));
    return this.policy.witnesses.map((witness) => {
      const row = rows.get(witnessVkey(witness));
      return {
        name: witness.name,
        url: witness.url,
        up: row ? row.failures === 0 && row.last_success_at !== null : false,
        cosignedSize: row?.cosigned_size === null || row?.cosigned_size === undefined ? null : Number(row.cosigned_size),
        failures: row?.failures ?? 0,
        lastSuccessAt: row?.last_success_at ?? null,
        lastError: row?.last_error ?? null,
      };
    });
  }
}

function witnessVkey(witness: PolicyWitness): string {
  return `${witness.key.name}+${Buffer.from(witness.key.keyId).toString('hex')}+${Buffer.from([0x04, ...witness.key.publicKey]).toString('base64')}`;
}
