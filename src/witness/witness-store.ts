import BetterSqlite from 'better-sqlite3';
import path from 'node:path';
import { ensurePrivateDir } from '../private-files.js';

/**
 * The witness's own state, in `<WO_WITNESS_DATA_DIR>/witness.sqlite`: the logs it follows and, per
 * log, the latest checkpoint it cosigned. Nothing here is shared with the service's database: a
 * witness is run by someone else (a customer, an insurer, an auditor) on their own machine.
 */

export interface FollowedLog {
  origin: string;
  /** The log's signed-note verifier key (`<origin>+<hex id>+<base64(0x01 ‖ key)>`). */
  vkey: string;
  addedAt: string;
}

export interface CosignedState {
  origin: string;
  size: number;
  /** Lowercase hex root hash. */
  rootHash: string;
  /** The checkpoint as cosigned: the log's signatures and this witness's cosignature. */
  note: string;
  /** The cosignature's timestamp (seconds); a later one is never smaller. */
  timestamp: number;
  updatedAt: string;
}

export interface Refusal {
  origin: string;
  status: number;
  reason: string;
  at: string;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS logs (
  origin TEXT PRIMARY KEY,
  vkey TEXT NOT NULL,
  added_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS cosigned (
  origin TEXT PRIMARY KEY REFERENCES logs (origin),
  size INTEGER NOT NULL,
  root_hash TEXT NOT NULL,
  note TEXT NOT NULL,
  timestamp INTEGER NOT NULL,
  updated_at TEXT NOT NULL
);
-- Validly signed checkpoints that were refused: evidence of a log's misbehaviour (tlog-witness "MAY log").
CREATE TABLE IF NOT EXISTS refusals (
  id INTEGER PRIMARY KEY,
  origin TEXT NOT NULL,
  status INTEGER NOT NULL,
  reason TEXT NOT NULL,
  request TEXT NOT NULL,
  at TEXT NOT NULL
);
`;

export class WitnessStore {
  private readonly db: BetterSqlite.Database;

  constructor(dataDir: string) {
    ensurePrivateDir(dataDir);
    this.db = new BetterSqlite(path.join(dataDir, 'witness.sqlite'));
    this.db.pragma('journal_mode = WAL');
    // A cosignature is answered only after its state is on disk (tlog-witness: "MUST persist ... before responding").
    this.db.pragma('synchronous = FULL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(SCHEMA);
  }

  addLog(origin: string, vkey: string, at: string): 'added' | 'updated' {
    const known = this.db.prepare('SELECT vkey FROM logs WHERE origin = ?').get(origin) as { vkey: string } | undefined;
    this.db.prepare('INSERT INTO logs (origin, vkey, added_at) VALUES (?, ?, ?) ON CONFLICT (origin) DO UPDATE SET vkey = excluded.vkey').run(origin, vkey, at);
    return known ? 'updated' : 'added';
  }

  logs(): FollowedLog[] {
    return (this.db.prepare('SELECT origin, vkey, added_at FROM logs ORDER BY origin').all() as Array<{ origin: string; vkey: string; added_at: string }>).map((row) => ({
      origin: row.origin,
      vkey: row.vkey,
      addedAt: row.added_at,
    }));
  }

  log(origin: string): FollowedLog | undefined {
    return this.logs().find((log) => log.origin === origin);
  }

  latest(origin: string): CosignedState | undefined {
    const row = this.db.prepare('SELECT origin, size, root_hash, note, timestamp, updated_at FROM cosigned WHERE origin = ?').get(origin) as
      | { origin: string; size: number; root_hash: string; note: string; timestamp: number; updated_at: string }
      | undefined;
    return row && { origin: row.origin, size: row.size, rootHash: row.root_hash, note: row.note, timestamp: row.timestamp, updatedAt: row.updated_at };
  }

  /**
   * Moves the state of `origin` from `expected` (undefined: never cosigned) to `next`, only if it is
   * still `expected`: a compare-and-swap in one immediate transaction, so two requests that were both
   * checked against the same state cannot both win, in this process or another. `sign` runs inside
   * it, so a cosignature exists only for a state that was stored. Answers the stored state otherwise.
   */
  compareAndSwap(
    expected: Pick<CosignedState, 'size' | 'rootHash'> | undefined,
    next: Omit<CosignedState, 'note' | 'timestamp'>,
    sign: (previousTimestamp: number) => { note: string; timestamp: number },
  ): { swapped: true; state: CosignedState } | { swapped: false; current: CosignedState | undefined } {
    const swap = this.db.transaction(() => {
      const current = this.latest(next.origin);
      const unchanged = expected === undefined ? current === undefined : current !== undefined && current.size === expected.size && current.rootHash === expected.rootHash;
      if (!unchanged) return { swapped: false as const, current };
      const { note, timestamp } = sign(current?.timestamp ?? 0);
      this.db
        .prepare(
          `INSERT INTO cosigned (origin, size, root_hash, note, timestamp, updated_at) VALUES (@origin, @size, @rootHash, @note, @timestamp, @updatedAt)
           ON CONFLICT (origin) DO UPDATE SET size = excluded.size, root_hash = excluded.root_hash, note = excluded.note, timestamp = excluded.timestamp, updated_at = excluded.updated_at`,
        )
        .run({ ...next, note, timestamp });
      return { swapped: true as const, state: { ...next, note, timestamp } };
    });
    return swap.immediate();
  }

  recordRefusal(origin: string, status: number, reason: string, request: string, at: string): void {
    this.db.prepare('INSERT INTO refusals (origin, status, reason, request, at) VALUES (?, ?, ?, ?, ?)').run(origin, status, reason, request, at);
  }

  refusals(): Refusal[] {
    return this.db.prepare('SELECT origin, status, reason, at FROM refusals ORDER BY id').all() as Refusal[];
  }

  close(): void {
    this.db.close();
  }
}
