import { hasSqlState } from '../errors.js';
import type pg from 'pg';

/**
 * Group commit for PostgreSQL's one-statement writes (RowAppends.writeIf: a create, a lifecycle
 * action, a comment, each with its Idempotency-Key's claim and answer).
 *
 * Why: such a write on its own is a transaction of its own, and what a transaction costs beyond its
 * statement is large next to the statement: a backend woken for it, an XID, a commit record, a wait
 * for the WAL flush that wakes the backend again, and on the client a pooled connection's turn.
 * With many concurrent callers each writing a row and an outbox row in one statement
 * (bench/tools/commit-cost.ts), committing the same writes in groups as below cost PostgreSQL a
 * fraction of the CPU per write that autocommit did, and the caller far less too; autocommit with
 * `synchronous_commit = off` stayed well above the groups, so the flush wait is not the whole cost.
 * Figures: bench/analysis.md, "Session 30".
 *
 * How: writes that arrive while a group is running wait for it; when it ends, everything waiting
 * (up to `maxGroupSize`) runs as the next group on one connection: BEGIN, the statements in the
 * order they arrived, and COMMIT, sent together (`runPipelined`). Each caller's promise settles only
 * after the COMMIT, so **no caller learns of a write before it is durable**. A write that finds
 * nothing running goes at once, as the single statement it is (no BEGIN or COMMIT), so a quiet
 * service pays nothing for this. Another group
 * starts beside the running ones (up to `maxGroups`) only when a whole group's worth is waiting, or
 * when the newest has run for `stallMs`, which a group of fresh writes does not: one of its statements
 * waits on a row lock, and the writes behind it should not wait too. Otherwise the load decides the
 * size of the groups, and with it what each write costs.
 *
 * Statements of one group run in the order they arrived, each seeing the ones before, exactly as if
 * each had committed before the next began; every statement is written to be decided by the rows it
 * finds (versions, claims, counts), so that order is as good as any other.
 *
 * When a statement fails (a unique violation of a claim, a deadlock PostgreSQL broke, a statement
 * timeout), or the server refuses the COMMIT, the group's transaction has rolled back and every member
 * runs again on its own, so each gets its own outcome and none pays for another's error. When the
 * connection fails, nobody can know whether the COMMIT, already sent, took effect: every member fails
 * with that error, as an autocommit statement whose connection failed would.
 */
export class PostgresCommitGroups {
  private waiting: Member[] = [];
  private running = 0;
  /** When the most recent group started (performance.now()). */
  private lastStartedAt = 0;
  /** Armed while writes wait behind running groups, to start another if those stall. */
  private stallTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly options: CommitGroupOptions,
  ) {}

  /** Runs one write outside any transaction: in the next group, or at once when none is running. */
  run<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    return new Promise<pg.QueryResult>((resolve, reject) => {
      this.waiting.push({ text, values, resolve, reject });
      this.startGroups();
    }) as Promise<pg.QueryResult<R>>;
  }

  /**
   * Starts a group for what is waiting when nothing runs, when a whole group's worth waits, or when
   * the newest running group has run for `stallMs`: one write waiting on a row lock (another
   * request's transaction, a claim still in flight) must not hold up every other write of the process.
   */
  private startGroups(): void {
    const { maxGroupSize, maxGroups, stallMs } = this.options;
    for (;;) {
      if (this.waiting.length === 0) return;
      const stalled = performance.now() - this.lastStartedAt >= stallMs;
      if (this.running > 0 && (this.running >= maxGroups || (this.waiting.length < maxGroupSize && !stalled))) break;
      const members = this.waiting.length <= maxGroupSize ? this.waiting : this.waiting.slice(0, maxGroupSize);
      this.waiting = members === this.waiting ? [] : this.waiting.slice(maxGroupSize);
      this.running++;
      this.lastStartedAt = performance.now();
      void this.runGroup(members).finally(() => {
        this.running--;
        this.startGroups();
      });
    }
    if (this.stallTimer === undefined && this.running < maxGroups) {
      this.stallTimer = setTimeout(() => {
        this.stallTimer = undefined;
        this.startGroups();
      }, stallMs);
      this.stallTimer.unref();
    }
  }

  private async runGroup(members: Member[]): Promise<void> {
    const stats = this.options.stats;
    if (members.length === 1) return this.runAlone(members[0]!);
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      for (const member of members) member.reject(error);
      return;
    }
    let outcome: GroupOutcome;
    try {
      outcome = await runPipelined(client, members);
    } catch (error) {
      // Not expected (every query's failure is in its settled result); nobody is left unanswered.
      client.release(error as Error);
      for (const member of members) member.reject(error);
      return;
    }
    if (outcome.kind === 'lost') {
      // The COMMIT may have been carried out or not: nobody can tell, so nobody is told it was.
      client.release(outcome.error);
      for (const member of members) member.reject(outcome.error);
      return;
    }
    client.release();
    if (outcome.kind === 'rolled back') {
      // A statement failed, or the server refused the COMMIT: nothing was committed, and each member
      // runs again on its own.
      if (stats) stats.retriedAlone += members.length;
      await Promise.all(members.map((member) => this.runAlone(member)));
      return;
    }
    if (stats) {
      stats.commits++;
      stats.members += members.length;
    }
    members.forEach((member, i) => {
      const result = outcome.results[i]!;
      if (result.status === 'fulfilled') member.resolve(result.value);
      else member.reject(result.reason);
    });
  }

  private async runAlone(member: Member): Promise<void> {
    try {
      const client = await this.pool.connect();
      try {
        member.resolve(await client.query(member.text, member.values));
        client.release();
      } catch (error) {
        // An error the server did not answer: the pool drops that client rather than hand it out again.
        client.release(hasSqlState(error) ? undefined : (error as Error));
        member.reject(error);
      }
    } catch (error) {
      member.reject(error);
    }
    if (this.options.stats) this.options.stats.alone++;
  }
}

export interface CommitGroupOptions {
  /** The most writes one group commits together. */
  maxGroupSize: number;
  /** The most groups running at once (each on a connection of its own). */
  maxGroups: number;
  /** How long the newest running group may run before what waits behind it starts a group of its own. */
  stallMs: number;
  /** Filled in as groups commit (for metrics and tests). */
  stats?: CommitGroupStats;
}

export interface CommitGroupStats {
  /** Groups of two or more writes committed. */
  commits: number;
  /** Writes those groups held. */
  members: number;
  /** Writes run on their own: nothing was running, or their group failed and they ran again. */
  alone: number;
  /** Writes of failed groups, run again on their own. */
  retriedAlone: number;
}

type GroupOutcome = { kind: 'committed'; results: PromiseSettledResult<pg.QueryResult>[] } | { kind: 'rolled back' } | { kind: 'lost'; error: Error };

/**
 * BEGIN, the members' statements and COMMIT, sent together without waiting for each answer (pg's
 * pipeline mode), so a group is one round trip and PostgreSQL runs its statements back to back. Sent
 * one after another, each statement waited for this process's event loop to take its answer before
 * the next went out, and the group with it.
 *
 * The COMMIT's own answer decides. In a failed transaction PostgreSQL skips what follows (25P02) and
 * answers the COMMIT as a ROLLBACK, without an error, so only `COMMIT` means committed; a statement
 * that pg refused to send (a value it could not serialize) then fails alone while the rest stand. A
 * COMMIT refused by the server rolled back. A COMMIT never answered (the connection failed) is lost.
 */
async function runPipelined(client: pg.PoolClient, members: Member[]): Promise<GroupOutcome> {
  const pipelined = client as unknown as { pipeline?: boolean };
  // Pipeline mode is the client's constructor option in pg; this client is idle and comes from a pool
  // shared with code that awaits each query, so it is switched on for the group only.
  pipelined.pipeline = true;
  let sent: PromiseSettledResult<pg.QueryResult>[];
  try {
    sent = await Promise.allSettled([client.query('BEGIN'), ...members.map((member) => client.query(member.text, member.values)), client.query('COMMIT')]);
  } finally {
    pipelined.pipeline = false;
  }
  const commit = sent.at(-1)!;
  if (commit.status === 'fulfilled') return commit.value.command === 'COMMIT' ? { kind: 'committed', results: sent.slice(1, -1) } : { kind: 'rolled back' };
  if (hasSqlState(commit.reason) && (client as unknown as { _queryable?: boolean })._queryable !== false) return { kind: 'rolled back' };
  return { kind: 'lost', error: commit.reason as Error };
}

interface Member {
  text: string;
  values: unknown[];
  resolve: (result: pg.QueryResult) => void;
  reject: (error: unknown) => void;
}
