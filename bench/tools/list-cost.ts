// What one `GET /api/v1/records?limit=50` costs, layer by layer, in one process with no load generator:
//   npx tsx bench/tools/list-cost.ts [work orders] [operations] [data dir]
// The organization is seeded once into a kept data directory (default /tmp/wo-list-cost-<n>) and reused
// by later runs, so iterating on the list does not pay the minutes of seeding 1M rows each time.
// Prints CPU µs per operation (process.cpuUsage), which holds up on a busy machine far better than req/s.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { pino } from 'pino';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createContext } from '../../src/context.js';
import { benchPersonId, seedDirectory, seedRecords } from '../lib/seed-records.js';

const size = Number(process.argv[2] ?? 1_000_000);
const operations = Number(process.argv[3] ?? 2000);
const dataDir = process.argv[4] ?? `/tmp/wo-list-cost-${size}`;
const only = process.env.LIST_COST_ONLY ? new RegExp(process.env.LIST_COST_ONLY) : undefined; // which labels to run
const statePath = path.join(dataDir, 'list-cost.json');
const sqlitePath = path.join(dataDir, 'wo.sqlite');
// Without the per-key rate limit: thousands of requests a second from one key would be answered 429.
const config = loadConfig({ WO_DATA_DIR: dataDir, LOG_LEVEL: 'silent', WO_RATE_LIMIT_PER_MINUTE: '0' });

interface SeededState {
  orgId: string;
  key: string;
}

async function seedOnce(): Promise<SeededState> {
  if (existsSync(statePath)) return JSON.parse(readFileSync(statePath, 'utf8')) as SeededState;
  const context = await createContext(config, { logger: pino({ level: 'silent' }), createKeys: true });
  const org = await context.organizations.create('list-cost');
  const { key } = await context.apiKeys.create({ orgId: org.id, name: 'list-cost', scopes: ['records:write', 'records:read'], createdBy: 'bench' });
  const category = await context.categories.create(org.id, { name: 'Plumbing' });
  await context.close();
  seedDirectory(sqlitePath, org.id);
  const seed = seedRecords(sqlitePath, { orgId: org.id, categoryId: category.id, count: size });
  process.stdout.write(`seeded ${seed.inserted} work orders in ${seed.seconds.toFixed(1)} s into ${dataDir}\n`);
  const state = { orgId: org.id, key };
  writeFileSync(statePath, JSON.stringify(state));
  return state;
}

const state = await seedOnce();
const context = await createContext(config, { logger: pino({ level: 'silent' }), createKeys: true });
const app = await buildApp(context);
await app.ready();
const headers = { authorization: `Bearer ${state.key}` };

async function cost(label: string, ops: number, operation: () => unknown): Promise<void> {
  if (only && !only.test(label)) return;
  for (let i = 0; i < Math.min(200, ops); i++) await operation(); // warm-up: JIT, page cache
  const cpu = process.cpuUsage();
  for (let i = 0; i < ops; i++) await operation();
  const used = process.cpuUsage(cpu);
  process.stdout.write(`${label.padEnd(60)} ${((used.user + used.system) / ops).toFixed(0).padStart(7)} µs CPU/op\n`);
}

const list = (query: string) => async () => {
  const response = await app.inject({ method: 'GET', url: `/api/v1/records?${query}`, headers });
  if (response.statusCode !== 200) throw new Error(`${response.statusCode} ${response.body}`);
};

await cost('Fastify floor: inject GET /healthz', operations, () => app.inject({ method: 'GET', url: '/healthz' }));
await cost('inject GET /records?limit=50', operations, list('limit=50'));
await cost('inject GET /records?limit=50&offset=1000', operations, list('limit=50&offset=1000'));
await cost('inject GET /records?limit=50&status=OPEN', operations, list('limit=50&status=OPEN'));
await cost('inject GET /records?limit=50&offset=99% of total', Math.ceil(operations / 4), list(`limit=50&offset=${Math.floor(size * 0.99)}`));
await cost('inject GET /records?limit=50&assigneeId=<a person of 1,000>', operations, list(`limit=50&assigneeId=${benchPersonId(42)}`));
await cost('inject GET /records?limit=50&categoryId=<the one>', operations, list('limit=50&categoryId=none'));
await cost('inject GET /records?limit=50&status=ASSIGNED', operations, list('limit=50&status=ASSIGNED'));
await cost('RecordService.listAsJson status=OPEN, offset 0', operations, () => context.records.listAsJson(state.orgId, { status: 'OPEN' }, { limit: 50, offset: 0 }));
await cost('RecordService.listAsJson assigneeId, offset 0', operations, () => context.records.listAsJson(state.orgId, { assigneeId: benchPersonId(42) }, { limit: 50, offset: 0 }));
await cost('RecordService.list (objects), offset 0', operations, () => context.records.list(state.orgId, {}, { limit: 50, offset: 0 }));
await cost('RecordService.listAsJson, offset 0', operations, () => context.records.listAsJson(state.orgId, {}, { limit: 50, offset: 0 }));
await cost('inject GET /records?limit=50&offset=50% of total', Math.ceil(operations / 4), list(`limit=50&offset=${Math.floor(size / 2)}`));
await cost('inject GET /records?limit=50&status=OPEN&offset=50% of OPEN', Math.max(5, Math.ceil(operations / 200)), list(`limit=50&status=OPEN&offset=${Math.floor(size * 0.2)}`));

// Floors: the same reads as hand-written statements on a second connection, prepared once.
const raw = new SqliteDatabase(sqlitePath, { readonly: true });
const total = raw.prepare('SELECT COALESCE(SUM(count), 0) AS n FROM record_counters WHERE org_id = ?');
const deferred = raw.prepare(
  `SELECT records.* FROM records JOIN (SELECT id FROM records WHERE org_id = ? ORDER BY created_at DESC, id DESC LIMIT 50 OFFSET ?) AS page
   ON page.id = records.id ORDER BY records.created_at DESC, records.id DESC`,
);
const direct = raw.prepare('SELECT * FROM records WHERE org_id = ? ORDER BY created_at DESC, id DESC LIMIT 50 OFFSET ?');
await cost('floor: counters total + deferred join, prepared, offset 0', operations, () => {
  total.get(state.orgId);
  deferred.all(state.orgId, 0);
});
await cost('floor: counters total + direct SELECT *, prepared, offset 0', operations, () => {
  total.get(state.orgId);
  direct.all(state.orgId, 0);
});
raw.close();
await app.close();
await context.close();
