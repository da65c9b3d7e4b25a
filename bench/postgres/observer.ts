import pg from 'pg';
import { readCpuSeconds } from '../lib/processes.js';
import { summarizeWaits, type ActiveBackend, type WaitSummary } from './wait-samples.js';

const SAMPLE_INTERVAL_MS = 50;

/** What PostgreSQL spent on a measurement: CPU of its processes, and what the busy backends waited on. */
export interface PostgresCost {
  cpuSeconds: number;
  waits: WaitSummary;
}

/** The PostgreSQL server a part ran on, for the report. */
export interface PostgresServerInfo {
  version: string;
  settings: Record<string, string>;
}

/**
 * Tables whose rows every writer updates (a hot row): the service's per-status counts and the
 * reference handler's counter. A backend queued for one of their rows often holds no lock that names
 * the table (an INSERT … ON CONFLICT checking the unique index, or all but the first of the waiters
 * for an UPDATE wait on the transaction id alone), so a transaction-id wait is put on the table in
 * which the awaited transaction has changed a row.
 */
const HOT_ROW_TABLES = ['record_counters', 'reference.counters'];

function activitySql(hotTables: readonly string[]): string {
  // Names come from HOT_ROW_TABLES above, never from input.
  const changedRows = hotTables.map((table) => `SELECT '${table}' AS rel, xmax FROM ${table}`).join(' UNION ALL ');
  const byTransaction = hotTables.length
    ? `(SELECT h.rel FROM pg_locks l JOIN (${changedRows}) h ON h.xmax = l.transactionid
         WHERE l.pid = a.pid AND l.locktype = 'transactionid' AND NOT l.granted LIMIT 1)`
    : 'NULL';
  // Otherwise a lock names its table: a row's tuple lock queued for (not granted), or held by the
  // first in the queue while it waits for the row's transaction; or a table lock queued for.
  return `
    SELECT coalesce(a.wait_event_type || ':' || a.wait_event, 'none') AS wait,
           CASE WHEN a.wait_event_type = 'Lock' THEN coalesce(
             (SELECT l.relation::regclass::text FROM pg_locks l
               WHERE l.pid = a.pid AND l.relation IS NOT NULL AND (NOT l.granted OR l.locktype = 'tuple')
               ORDER BY l.granted LIMIT 1),
             ${byTransaction})
           END AS lock_relation
      FROM pg_stat_activity a
     WHERE a.datname = current_database() AND a.state = 'active' AND a.pid <> pg_backend_pid()`;
}

// The bench database's backends, and the cluster's own processes (WAL writer, checkpointer, background
// writer: no database), which write for every database on the server, the tests' included.
const PROCESSES_SQL = `
  SELECT pid FROM pg_stat_activity
   WHERE (datname = current_database() OR datname IS NULL) AND pid <> pg_backend_pid()`;

const SETTINGS = ['shared_buffers', 'synchronous_commit', 'max_connections', 'autovacuum'];

/**
 * Watches the bench database from a connection of its own (left out of every figure): CPU of the
 * PostgreSQL processes from /proc/<pid>/stat, and pg_stat_activity sampled every ~50 ms.
 */
export class PostgresObserver {
  private constructor(private readonly client: pg.Client) {}

  static async connect(databaseUrl: string): Promise<PostgresObserver> {
    const client = new pg.Client({ connectionString: databaseUrl });
    // Dropping the database (at the end, or on an interrupt) ends this connection: not an error to crash on.
    client.on('error', () => {});
    await client.connect();
    return new PostgresObserver(client);
  }

  async serverInfo(): Promise<PostgresServerInfo> {
    const version = (await this.client.query<{ v: string }>('SELECT current_setting($1) AS v', ['server_version'])).rows[0]!.v;
    const rows = (await this.client.query<{ name: string; setting: string }>('SELECT name, current_setting(name) AS setting FROM unnest($1::text[]) AS name', [SETTINGS])).rows;
    return { version, settings: Object.fromEntries(rows.map((r) => [r.name, r.setting])) };
  }

  /** Runs `work` while sampling; answers its result and what PostgreSQL spent meanwhile. */
  async during<T>(work: () => Promise<T>): Promise<{ result: T; cost: PostgresCost }> {
    const hotTables = (await this.client.query<{ name: string }>('SELECT name FROM unnest($1::text[]) AS name WHERE to_regclass(name) IS NOT NULL', [HOT_ROW_TABLES])).rows;
    const sql = activitySql(hotTables.map((t) => t.name));
    const cpuBefore = await this.processCpu();
    const samples: ActiveBackend[][] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const started = Date.now();
        samples.push(await this.sampleActivity(sql));
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, SAMPLE_INTERVAL_MS - (Date.now() - started))));
      }
    })();
    let result: T;
    try {
      result = await work();
    } finally {
      sampling = false;
      await sampler;
    }
    const cpuAfter = await this.processCpu();
    // A backend that started during the measurement (a pool growing) counts from its start.
    let cpuSeconds = 0;
    for (const [pid, after] of cpuAfter) cpuSeconds += after - (cpuBefore.get(pid) ?? 0);
    return { result, cost: { cpuSeconds, waits: summarizeWaits(samples) } };
  }

  private async sampleActivity(sql: string): Promise<ActiveBackend[]> {
    const rows = (await this.client.query<{ wait: string; lock_relation: string | null }>(sql)).rows;
    return rows.map((r) => ({ wait: r.wait, lockRelation: r.lock_relation }));
  }

  private async processCpu(): Promise<Map<number, number>> {
    const cpu = new Map<number, number>();
    for (const { pid } of (await this.client.query<{ pid: number }>(PROCESSES_SQL)).rows) {
      const seconds = readCpuSeconds(pid);
      if (Number.isFinite(seconds)) cpu.set(pid, seconds);
    }
    return cpu;
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => {});
  }
}
