// What following the event feed costs as the outbox grows: one follow step (`after` a full page before
// the newest event, limit 100) on an outbox of 10k events and one of 10M, in one process, no load generator:
//   npx tsx bench/tools/feed-cost.ts [sizes, comma-separated] [operations]
// Events are seeded straight into SQLite (multi-row batches in large transactions), half of them in the
// followed organization and the rest spread over 99 others, into kept data directories
// (/tmp/wo-feed-cost-<n>) that later runs reuse. Prints CPU µs and wall µs per operation.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { pino } from 'pino';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createContext } from '../../src/context.js';

const sizes = (process.argv[2] ?? '10000,10000000').split(',').map(Number);
const operations = Number(process.argv[3] ?? 2000);
const TYPES = ['record.created', 'record.assigned', 'record.status_changed', 'record.completed', 'asset.updated', 'asset.deleted'];
const OTHER_ORGS = 99;

interface SeededState {
  orgId: string;
  key: string;
}

/** Seeds `size` dispatched events; every second one is the followed organization's. */
function seedEvents(sqlitePath: string, orgId: string, size: number): number {
  const started = performance.now();
  const sqlite = new SqliteDatabase(sqlitePath);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = OFF');
  const rowsPerInsert = 100;
  const insert = sqlite.prepare(
    `INSERT INTO outbox_events (id, org_id, type, payload, created_at, dispatched_at) VALUES ${Array(rowsPerInsert).fill('(?, ?, ?, ?, ?, NULL)').join(', ')}`,
  );
  const createdAt = new Date(Date.now() - 86_400_000).toISOString();
  const insertBatch = sqlite.transaction((from: number, to: number) => {
    for (let i = from; i < to; i += rowsPerInsert) {
      const values: string[] = [];
      for (let j = i; j < i + rowsPerInsert; j++) {
        const org = j % 2 === 0 ? orgId : `org_other${j % OTHER_ORGS}`;
        const serial = String(j).padStart(10, '0');
        values.push(`evt_bench${serial}`, org, TYPES[j % TYPES.length]!, `{"recordId":"rec_bench${serial}","from":"OPEN","to":"ASSIGNED","action":"assign"}`, createdAt);
      }
      insert.run(values);
    }
  });
  for (let from = 0; from < size; from += 100_000) insertBatch(from, Math.min(size, from + 100_000));
  // Everything seeded counts as dispatched: the dispatcher's cursor past the last one.
  sqlite.prepare('UPDATE outbox_cursor SET last_seq = (SELECT MAX(seq) FROM outbox_events) WHERE id = 1').run();
  sqlite.close();
  return (performance.now() - started) / 1000;
}

async function seedOnce(size: number, dataDir: string): Promise<SeededState> {
  const statePath = path.join(dataDir, 'feed-cost.json');
  if (existsSync(statePath)) return JSON.parse(readFileSync(statePath, 'utf8')) as SeededState;
  const context = await createContext(loadConfig({ WO_DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), { logger: pino({ level: 'silent' }) });
  const org = await context.organizations.create('feed-cost');
  const { key } = await context.apiKeys.create({ orgId: org.id, name: 'feed-cost', scopes: ['events:read'], createdBy: 'bench' });
  await context.close();
  const seconds = seedEvents(path.join(dataDir, 'wo.sqlite'), org.id, size);
  process.stdout.write(`seeded ${size} events in ${seconds.toFixed(1)} s into ${dataDir}\n`);
  const state = { orgId: org.id, key };
  writeFileSync(statePath, JSON.stringify(state));
  return state;
}

async function cost(label: string, ops: number, operation: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < Math.min(200, ops); i++) await operation(); // warm-up: JIT, page cache
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < ops; i++) await operation();
  const wall = ((performance.now() - started) * 1000) / ops;
  const used = process.cpuUsage(cpu);
  process.stdout.write(`${label.padEnd(64)} ${((used.user + used.system) / ops).toFixed(0).padStart(8)} µs CPU/op ${wall.toFixed(0).padStart(8)} µs wall/op\n`);
}

for (const size of sizes) {
  const dataDir = `/tmp/wo-feed-cost-${size}`;
  const state = await seedOnce(size, dataDir);
  const context = await createContext(loadConfig({ WO_DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), { logger: pino({ level: 'silent' }) });
  const app = await buildApp(context);
  await app.ready();
  const headers = { authorization: `Bearer ${state.key}` };

  // `after` = the organization's 101st newest event: the step answers a full page of 100, total 100.
  const raw = new SqliteDatabase(path.join(dataDir, 'wo.sqlite'), { readonly: true });
  const after = (raw.prepare('SELECT seq FROM outbox_events WHERE org_id = ? ORDER BY seq DESC LIMIT 1 OFFSET 100').get(state.orgId) as { seq: number }).seq;
  const plan = raw
    .prepare('EXPLAIN QUERY PLAN SELECT seq, id, type, payload, created_at FROM outbox_events WHERE org_id = ? AND seq > ? AND seq <= (SELECT last_seq FROM outbox_cursor WHERE id = 1) ORDER BY seq LIMIT 100')
    .all(state.orgId, after) as { detail: string }[];
  raw.close();
  process.stdout.write(`\n${size} events (${size / 2} in the followed organization); plan: ${plan.map((row) => row.detail).join(' / ')}\n`);

  // Checked once (the answer parses, and holds `expected` events), then timed without the client's JSON parse.
  const follow = async (query: string, expected?: number) => {
    const request = () => app.inject({ method: 'GET', url: `/api/v1/events?${query}`, headers });
    const response = await request();
    const page = response.json() as { events: unknown[] };
    if (response.statusCode !== 200 || (expected !== undefined && page.events.length !== expected)) throw new Error(`${response.statusCode} ${response.body.slice(0, 200)}`);
    return request;
  };
  await cost(`${size}: follow step, after near the end, limit 100`, operations, await follow(`after=${after}&limit=100`, 100));
  await cost(`${size}: follow step, type=record.created (1 in 3)`, operations, await follow(`after=${after}&limit=100&type=record.created`));
  await cost(`${size}: caught up (after = newest), limit 100`, operations, await follow(`after=${after + 1_000_000_000}&limit=100`, 0));
  // What a consumer starting from the beginning pays per page: the count of its whole backlog.
  await cost(`${size}: first page of a full catch-up (after=0), limit 100`, Math.max(5, Math.ceil(operations / (size / 10_000))), await follow('after=0&limit=100', 100));
  await app.close();
  await context.close();
}
