// What a PostgreSQL transaction costs beyond its statement, and what commit groups save of it:
//   npx tsx bench/tools/commit-cost.ts          (BENCH_POSTGRES_URL as for the bench)
// On a fresh database, CONNECTIONS (default 50) concurrent callers each write one row and one outbox
// row in one statement, again and again for SECONDS (default 6) per round, alternating over ROUNDS
// (default 2) rounds between the ways a statement can commit:
//   autocommit   each statement its own transaction on a pool of 10 (the service before commit groups)
//   sequential   PostgresCommitGroups with each group's statements sent one at a time
//   pipelined    PostgresCommitGroups as the service runs them (src/db/postgres/commit-groups.ts)
// Prints per round writes/s, p50/p99 latency and µs of CPU per write for this process and PostgreSQL
// (every server process, as the bench's PostgreSQL figures), and PostgreSQL's waits.
import pg from 'pg';
import { PostgresCommitGroups } from '../../src/db/postgres/commit-groups.js';
import { BenchDatabase } from '../postgres/bench-database.js';
import { PostgresObserver } from '../postgres/observer.js';
import { describeWaits } from '../postgres/wait-samples.js';

const rounds = Number(process.env.ROUNDS ?? 2);
const seconds = Number(process.env.SECONDS ?? 6);
const connections = Number(process.env.CONNECTIONS ?? 50);

const STATEMENT =
  'WITH written AS (INSERT INTO notes (id, org_id, body) VALUES ($1, $2, $3::jsonb) RETURNING id) ' +
  'INSERT INTO outbox (note_id, payload) SELECT id, $3::jsonb FROM written';
const BODY = JSON.stringify({ description: 'No heat in the kitchen', address: '12 Main St', metadata: { floor: 2, unit: 'B' } });

type Write = (values: unknown[]) => Promise<unknown>;

/** Ids are numbered across all rounds: each write inserts a new row. */
let written = 0;

/** Runs `write` from `connections` callers for `seconds`; answers the figures. */
async function measure(observer: PostgresObserver, write: Write): Promise<string> {
  const latencies: number[] = [];
  const until = Date.now() + seconds * 1000;
  const selfBefore = process.cpuUsage();
  const { cost } = await observer.during(() =>
    Promise.all(
      Array.from({ length: connections }, async () => {
        while (Date.now() < until) {
          const started = performance.now();
          await write([`note_${written++}`, 'org_1', BODY]);
          latencies.push(performance.now() - started);
        }
      }),
    ),
  );
  const self = process.cpuUsage(selfBefore);
  latencies.sort((a, b) => a - b);
  const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!.toFixed(1);
  const per = (cpuSeconds: number) => Math.round((cpuSeconds * 1e6) / latencies.length);
  return (
    `${Math.round(latencies.length / seconds)} writes/s, p50 ${at(0.5)} p99 ${at(0.99)} ms; µs CPU per write: this process ` +
    `${per((self.user + self.system) / 1e6)}, PostgreSQL ${per(cost.cpuSeconds)}; waits: ${describeWaits(cost.waits, 4)}`
  );
}

/** PostgresCommitGroups whose groups send one statement at a time (pipeline mode left off). */
function sequentialGroups(pool: pg.Pool): PostgresCommitGroups {
  const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  const unpipelined = Object.create(pool) as pg.Pool;
  (unpipelined as { connect: () => Promise<pg.PoolClient> }).connect = async () => {
    const client = await connect();
    // The groups switch pipeline mode on through this property; a setter that ignores it keeps it off.
    Object.defineProperty(client, 'pipeline', { configurable: true, get: () => false, set: () => {} });
    return client;
  };
  return new PostgresCommitGroups(unpipelined, { maxGroupSize: 64, maxGroups: 5, stallMs: 20 });
}

const database = await BenchDatabase.create();
const observer = await PostgresObserver.connect(database.url);
const pool = new pg.Pool({ connectionString: database.url, max: 10 });
const sequentialPool = new pg.Pool({ connectionString: database.url, max: 10 });
try {
  await pool.query('CREATE TABLE notes (id text PRIMARY KEY, org_id text NOT NULL, body jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())');
  await pool.query('CREATE INDEX ON notes (org_id, created_at)');
  await pool.query('CREATE TABLE outbox (seq bigserial PRIMARY KEY, note_id text NOT NULL, payload jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())');
  const pipelined = new PostgresCommitGroups(pool, { maxGroupSize: 64, maxGroups: 5, stallMs: 20 });
  const sequential = sequentialGroups(sequentialPool);
  const ways: [string, Write][] = [
    ['autocommit', (values) => pool.query(STATEMENT, values)],
    ['sequential', (values) => sequential.run(STATEMENT, values)],
    ['pipelined', (values) => pipelined.run(STATEMENT, values)],
  ];
  for (const [, write] of ways) await measure(observer, write); // warm-up: connections, plans
  for (let round = 1; round <= rounds; round++) {
    for (const [name, write] of ways) console.log(`round ${round} ${name.padEnd(10)} ${await measure(observer, write)}`);
  }
} finally {
  await pool.end();
  await sequentialPool.end();
  await observer.close();
  await database.drop();
}
