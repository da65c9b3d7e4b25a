import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';

/**
 * When the transparency log first covered a given number of statements, read after a run from the
 * service's own database: the `created_at` of the first checkpoint at least that large. The sequencer
 * stamps it as it signs the checkpoint, inside the transaction that seals the batch; the batch's
 * leaves, nodes, marks and events are written after it, then the transaction commits. So the time is
 * early by the rest of that transaction: for a run's last seal, which holds the completions of one
 * batch interval, a few milliseconds. Polling the public checkpoint during the run was late instead,
 * by up to its interval plus a request's latency, and every poll was a request to the API process and
 * PostgreSQL being measured.
 */
export interface CheckpointTimes {
  /** The log's size now. */
  size(): Promise<number>;
  /** When the log first reached `size` leaves (ms since the epoch), or null if it has not. */
  coveredAt(size: number): Promise<number | null>;
}

const SIZE_SQL = 'SELECT coalesce(max(tree_size), 0) AS size FROM tlog_checkpoints';
// The smallest covering checkpoint is also the earliest: tree sizes only grow with time.
const COVERED_SQL = 'SELECT created_at FROM tlog_checkpoints WHERE tree_size >= $1 ORDER BY tree_size LIMIT 1';

/** The embedded database of a service running on `dataDir`, opened read-only beside it (WAL allows it). */
export function sqliteCheckpointTimes(dataDir: string): CheckpointTimes {
  const read = <T>(sql: string, ...values: unknown[]): T | undefined => {
    const db = new Database(path.join(dataDir, 'wo.sqlite'), { readonly: true, fileMustExist: true });
    try {
      return db.prepare(sql.replace('$1', '?')).get(...values) as T | undefined;
    } finally {
      db.close();
    }
  };
  return {
    size: async () => Number(read<{ size: number }>(SIZE_SQL)?.size ?? 0),
    coveredAt: async (size) => timeOf(read<{ created_at: string }>(COVERED_SQL, size)),
  };
}

/** The PostgreSQL database at `url`, one short connection per question. */
export function postgresCheckpointTimes(url: string): CheckpointTimes {
  const read = async <T extends pg.QueryResultRow>(sql: string, ...values: unknown[]): Promise<T | undefined> => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<T>(sql, values)).rows[0];
    } finally {
      await client.end();
    }
  };
  return {
    size: async () => Number((await read<{ size: string }>(SIZE_SQL))?.size ?? 0),
    coveredAt: async (size) => timeOf(await read<{ created_at: string }>(COVERED_SQL, size)),
  };
}

function timeOf(row: { created_at: string } | undefined): number | null {
  return row ? Date.parse(row.created_at) : null;
}
