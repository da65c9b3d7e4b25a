// Where a create's CPU goes, layer by layer, in one process with no load generator competing:
//   npx tsx bench/tools/create-cost.ts [operations]
// Prints CPU µs per operation (process.cpuUsage), which holds up on a busy machine far better than req/s.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { pino } from 'pino';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createContext } from '../../src/context.js';

const operations = Number(process.argv[2] ?? 3000);
const dataDir = mkdtempSync(path.join(tmpdir(), 'wo-cost-'));
const context = await createContext(loadConfig({ WO_DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), { logger: pino({ level: 'silent' }), createKeys: true });
const org = await context.organizations.create('cost');
const { key } = await context.apiKeys.create({ orgId: org.id, name: 'cost', scopes: ['records:write', 'records:read'], createdBy: 'bench' });
const category = await context.categories.create(org.id, { name: 'Plumbing' });
const principal = await context.apiKeys.authenticate(key);
const input = { categoryId: category.id, address: '1 Main Street', requesterName: 'Requester', description: 'The radiator is cold.' };
const body = JSON.stringify(input);
const app = await buildApp(context);
await app.ready();

async function cost(label: string, operation: (i: number) => unknown): Promise<void> {
  for (let i = 0; i < Math.min(500, operations); i++) await operation(-1 - i); // warm-up: JIT, page cache
  const cpu = process.cpuUsage();
  for (let i = 0; i < operations; i++) await operation(i);
  const used = process.cpuUsage(cpu);
  process.stdout.write(`${label.padEnd(66)} ${((used.user + used.system) / operations).toFixed(0).padStart(6)} µs CPU/op\n`);
}

const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
let run = 0;
await cost('Fastify floor: inject GET /healthz', () => app.inject({ method: 'GET', url: '/healthz' }));
await cost('inject POST /api/v1/records (no Idempotency-Key)', () => app.inject({ method: 'POST', url: '/api/v1/records', headers, payload: body }));
await cost('inject POST /api/v1/records with Idempotency-Key', (i) =>
  app.inject({ method: 'POST', url: '/api/v1/records', headers: { ...headers, 'idempotency-key': `cost-${run++}-${i}` }, payload: body }),
);
await cost('auth: apiKeys.authenticate', () => context.apiKeys.authenticate(key));
await cost('idempotency: claim + complete (two commits)', async (i) => {
  const k = `direct-${run++}-${i}`;
  const claim = await context.idempotency.claim(org.id, k, { raw: 'fingerprint', value: null });
  if (claim.kind === 'claimed') await context.idempotency.complete(claim.claim, { status: 201, headers: {}, body });
});
await cost('RecordService.create (one transaction, Kysely)', () => context.records.create(principal, input));
// Under load ~24 requests share a group commit: the same, 24 at a time, so the commit is shared as there.
await cost('RecordService.create, 24 at a time (one group commit per 24)', (i) => (i % 24 === 23 || i < 0 ? Promise.all(Array.from({ length: 24 }, () => context.records.create(principal, input))) : undefined));

// The floor: the same statements as RecordService.create, prepared once, in one better-sqlite3 transaction.
const raw = new SqliteDatabase(path.join(dataDir, 'wo.sqlite'));
raw.pragma('synchronous = NORMAL');
const checkCategory = raw.prepare('SELECT id FROM categories WHERE id = ? AND org_id = ?');
const insertRecord = raw.prepare(
  `INSERT INTO records (id, org_id, category_id, status, address, requester_name, description, priority, metadata, created_at, updated_at, version)
   VALUES (?, ?, ?, 'OPEN', ?, ?, ?, 'MEDIUM', '{}', ?, ?, 1)`,
);
const bumpCounter = raw.prepare(`INSERT INTO record_counters (org_id, status, count) VALUES (?, 'OPEN', 1) ON CONFLICT (org_id, status) DO UPDATE SET count = count + 1`);
const insertHistory = raw.prepare(`INSERT INTO record_events (id, org_id, record_id, action, to_status, data, created_at) VALUES (?, ?, ?, 'created', 'OPEN', '{}', ?)`);
const insertOutbox = raw.prepare(`INSERT INTO outbox_events (id, org_id, type, payload, created_at) VALUES (?, ?, 'record.created', ?, ?)`);
const createRaw = raw.transaction((n: number) => {
  const now = new Date().toISOString();
  const id = `rec_raw_${run}_${n}`;
  checkCategory.get(category.id, org.id);
  insertRecord.run(id, org.id, category.id, input.address, input.requesterName, input.description, now, now);
  bumpCounter.run(org.id);
  insertHistory.run(`rev_${id}`, org.id, id, now);
  insertOutbox.run(`evt_${id}`, org.id, body, now);
});
run++;
await cost('floor: the same 5 statements, prepared, one better-sqlite3 transaction', (i) => createRaw(i));
const begin = raw.prepare('BEGIN IMMEDIATE');
const commit = raw.prepare('COMMIT');
run++;
await cost('floor: the same, 24 transactions (savepoints) per commit', (i) => {
  if (i % 24 !== 23 && i >= 0) return;
  begin.run();
  for (let n = 0; n < 24; n++) createRaw(i * 24 + n);
  commit.run();
});
const insertOne = raw.prepare(`INSERT INTO outbox_events (id, org_id, type, payload, created_at) VALUES (?, ?, 'x', '{}', ?)`);
run++;
await cost('floor: one autocommitted insert (the price of a commit)', (i) => insertOne.run(`evt_one_${run}_${i}`, org.id, 'now'));
raw.close();
await app.close();
await context.close();
rmSync(dataDir, { recursive: true, force: true });
