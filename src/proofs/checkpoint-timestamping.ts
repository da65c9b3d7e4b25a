import type { Logger } from 'pino';
import type { Certificate } from 'pkijs';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import type { Db } from '../db/database.js';
import { toBase64 } from './encoding.js';
import { findTimestampAuthorityState, saveTimestampAuthorityState } from './repository.js';
import { newNonce, TIMESTAMP_QUERY_MEDIA_TYPE, timestampRequest, tokenOfReply, verifyTimestampToken } from './timestamp-token.js';
import type { TlogCheckpointsTable } from './tables.js';
import type { TransparencyLog } from './transparency-log.js';

/**
 * Has each published checkpoint body timestamped by the RFC 3161 TSA of WO_TSA_URL, and keeps a token
 * on the checkpoint's row only once it verifies: its imprint is the body's SHA-256, it answers our
 * nonce, its signer's only extended key usage is id-kp-timeStamping and chains to WO_TSA_ROOTS. The
 * bundles proven against the checkpoint then carry it. Nothing waits for it: sealing and publication
 * go on while the TSA is down, and a bundle fetched before its checkpoint's token came has none.
 *
 * Several checkpoints waiting are asked for in parallel, each request with its own timeout. The first
 * round starts at the latest published checkpoint: those published before a TSA was configured keep
 * no token (stamping them now would bound nothing their witnesses did not).
 */

/** Checkpoints asked for at once. */
const BATCH = 8;
const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 30_000;

export interface TimestampAuthority {
  url: string;
  /** WO_TSA_ROOTS, parsed: the signer's certificate must chain to one. */
  roots: Certificate[];
}

export interface TimestampAuthorityHealth {
  url: string;
  /** Its last request gave a token that verifies. */
  up: boolean;
  timestampedSize: number | null;
  failures: number;
  lastSuccessAt: string | null;
  lastError: string | null;
}

export interface TimestampingOptions {
  /** How long the TSA has to answer one request. */
  timeoutMs: number;
  /** How long to wait when there is nothing to timestamp (a publication in this process wakes the loop sooner). */
  idleMs: number;
}

class TimestampMetrics {
  readonly up;
  readonly timestampedSize;
  readonly requests;

  constructor(registry: Registry) {
    const registers = [registry];
    this.up = new Gauge({ name: 'wo_tsa_up', help: 'Whether the last request to the TSA of WO_TSA_URL gave a token that verifies (1) or not (0)', registers });
    this.timestampedSize = new Gauge({ name: 'wo_tsa_timestamped_tree_size', help: 'Size of the latest checkpoint this process had timestamped', registers });
    this.requests = new Counter({ name: 'wo_tsa_requests_total', help: 'Timestamp requests to the TSA by outcome (timestamped, refused, failed)', labelNames: ['outcome'], registers });
  }
}

/** Why a request gave no token: `refused` the TSA answered but with nothing we keep, `failed` no answer. */
class TimestampFailure extends Error {
  constructor(
    readonly outcome: 'refused' | 'failed',
    message: string,
  ) {
    super(message);
  }
}

export class CheckpointTimestamping {
  private readonly metrics: TimestampMetrics;
  /** Checkpoints of at least this size are timestamped (set by the first round). */
  private from: number | undefined;
  private timestampedSize: number | null = null;
  private failures = 0;
  private lastAttemptAt: string | null = null;
  private lastSuccessAt: string | null = null;
  private lastError: string | null = null;
  private nextAttemptAt = 0;
  /** Sizes this process published: it timestamps those; another process's, only once they wait too long. */
  private readonly publishedHere = new Set<number>();
  private firstRound = true;

  constructor(
    private readonly db: Db,
    private readonly log: TransparencyLog,
    readonly authority: TimestampAuthority,
    private readonly options: TimestampingOptions,
    private readonly clock: Clock,
    private readonly logger: Pick<Logger, 'warn' | 'info'>,
    registry: Registry,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {
    this.metrics = new TimestampMetrics(registry);
  }

  published(treeSize: number): void {
    this.publishedHere.add(treeSize);
  }

  private async load(): Promise<number> {
    if (this.from !== undefined) return this.from;
    const row = await findTimestampAuthorityState(this.db, this.authority.url);
    if (row) Object.assign(this, { failures: row.failures, lastAttemptAt: row.last_attempt_at, lastSuccessAt: row.last_success_at, lastError: row.last_error });
    this.timestampedSize = row?.timestamped_size === null || row?.timestamped_size === undefined ? null : Number(row.timestamped_size);
    this.from = this.timestampedSize ?? (await this.log.latestPublished())?.treeSize ?? 0;
    return this.from;
  }

  /** One round; resolves to how long to wait before the next. */
  async step(): Promise<number> {
    const from = await this.load();
    const now = this.clock.now().getTime();
    if (this.nextAttemptAt > now) return Math.min(this.nextAttemptAt - now, this.options.idleMs * 4);
    const waiting = await this.log.untimestamped(from, BATCH * 4);
    // Another process published it and asks for it; take it over only when it has waited for long.
    const mine = waiting.filter((row) => this.firstRound || this.publishedHere.has(Number(row.tree_size)) || now - Date.parse(row.published_at ?? row.created_at) > 2 * this.options.timeoutMs).slice(0, BATCH);
    this.firstRound = false;
    if (mine.length === 0) return this.options.idleMs;
    this.lastAttemptAt = this.clock.now().toISOString();
    const outcomes = await Promise.all(mine.map((row) => this.timestamp(row).then(() => undefined, (error: unknown) => error as Error)));
    const failure = outcomes.find((outcome) => outcome !== undefined);
    for (const row of mine) this.publishedHere.delete(Number(row.tree_size));
    if (failure) {
      // Retried with a growing wait; the checkpoints stay without a token until then.
      for (const row of mine) this.publishedHere.add(Number(row.tree_size));
      await this.failed(failure);
      return Math.max(50, this.nextAttemptAt - this.clock.now().getTime());
    }
    Object.assign(this, { failures: 0, lastSuccessAt: this.clock.now().toISOString(), lastError: null, nextAttemptAt: 0 });
    this.metrics.up.set(1);
    await this.save();
    return waiting.length > mine.length ? 0 : this.options.idleMs;
  }

  /** Asks the TSA for a token over one checkpoint's body, checks it, and keeps it. */
  private async timestamp(row: TlogCheckpointsTable): Promise<void> {
    const body = row.note.slice(0, row.note.lastIndexOf('\n\n') + 1);
    const nonce = newNonce();
    let reply: Uint8Array;
    try {
      const response = await this.fetchImpl(this.authority.url, {
        method: 'POST',
        headers: { 'content-type': TIMESTAMP_QUERY_MEDIA_TYPE },
        body: (await timestampRequest(body, nonce)) as Uint8Array<ArrayBuffer>,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      reply = new Uint8Array(await response.arrayBuffer());
      if (response.status !== 200) throw new TimestampFailure('refused', `answered ${response.status}`);
    } catch (error) {
      this.metrics.requests.inc({ outcome: error instanceof TimestampFailure ? 'refused' : 'failed' });
      if (error instanceof TimestampFailure) throw error;
      throw new TimestampFailure('failed', (error as Error).name === 'TimeoutError' ? `no answer within ${this.options.timeoutMs} ms` : (error as Error).message);
    }
    const token = tokenOfReply(reply);
    if (typeof token === 'string') {
      this.metrics.requests.inc({ outcome: 'refused' });
      throw new TimestampFailure('refused', token);
    }
    // @NOTE: a token is kept only once it verifies, nonce included: a bundle must never carry one a verifier would refuse.
    const verdict = await verifyTimestampToken(token, body, { roots: this.authority.roots, nonce });
    if (!verdict.valid) {
      this.metrics.requests.inc({ outcome: 'refused' });
      throw new TimestampFailure('refused', `its token does not verify (${verdict.problem}): ${verdict.detail}`);
    }
    await this.log.addTimestampToken(Number(row.tree_size), toBase64(token));
    this.metrics.requests.inc({ outcome: 'timestamped' });
    const size = Number(row.tree_size);
    if (this.timestampedSize === null || size > this.timestampedSize) {
      this.timestampedSize = size;
      this.metrics.timestampedSize.set(size);
    }
  }

  private async failed(error: Error): Promise<void> {
    this.failures++;
    this.lastError = error.message;
    const backoff = Math.min(BACKOFF_BASE_MS * 2 ** (this.failures - 1), BACKOFF_CAP_MS);
    this.nextAttemptAt = this.clock.now().getTime() + backoff * (0.8 + Math.random() * 0.4);
    this.metrics.up.set(0);
    if (this.failures === 1 || this.failures % 20 === 0) this.logger.warn({ url: this.authority.url, failures: this.failures, reason: error.message }, 'the TSA did not timestamp a checkpoint');
    await this.save().catch(() => undefined);
  }

  private async save(): Promise<void> {
    await saveTimestampAuthorityState(this.db, {
      url: this.authority.url,
      timestamped_size: this.timestampedSize,
      last_attempt_at: this.lastAttemptAt,
      last_success_at: this.lastSuccessAt,
      failures: this.failures,
      last_error: this.lastError,
    });
  }

  /** As stored (the same in every process): for /readyz. */
  async health(): Promise<TimestampAuthorityHealth> {
    const row = await findTimestampAuthorityState(this.db, this.authority.url);
    return {
      url: this.authority.url,
      up: row ? row.failures === 0 && row.last_success_at !== null : false,
      timestampedSize: row?.timestamped_size === null || row?.timestamped_size === undefined ? null : Number(row.timestamped_size),
      failures: row?.failures ?? 0,
      lastSuccessAt: row?.last_success_at ?? null,
      lastError: row?.last_error ?? null,
    };
  }
}
