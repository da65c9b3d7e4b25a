// Instructions per meter reading (SQLite), counted by valgrind (callgrind), against the reference's:
// the same batches of 1,000 inserted by plain better-sqlite3 in one transaction each. Counts do not
// depend on the machine's speed, so builds (or settings, through the environment) compare on a busy
// machine; compare medians of alternating runs. Uses a checkout's dist/ (`npm run build` there first):
//   valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/cg.out \
//     node bench/tools/readings-instructions.mjs <checkout> service|reference [batches=20] [warm-up=60]
// The service is built in this process as `wo serve` builds it; batches go through Fastify with
// `inject`, `accept-encoding: gzip` as fetch sends it, so the answer's compression is counted (on
// whichever thread it runs: callgrind counts them all); each body's JSON.stringify is left out, as the
// client's. Divide "I refs" by batches × 1,000.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { countInstructions, openCheckoutContext } from './callgrind-service.mjs';

const root = path.resolve(process.argv[2] ?? '.');
const mode = process.argv[3] ?? 'service';
const total = Number(process.argv[4] ?? 20);
const warm = Number(process.argv[5] ?? 60);
const PER_BATCH = 1000;
const startMs = Date.now() - 3_600_000;
let serial = 0;
const batch = () => {
  const readings = [];
  for (let i = 0; i < PER_BATCH; i++, serial++) readings.push({ value: serial, readAt: new Date(startMs + serial).toISOString(), externalId: `bench-${serial}` });
  return readings;
};
const dataDir = mkdtempSync(path.join(tmpdir(), 'wo-cg-readings-'));
let run;
let close;
if (mode === 'reference') {
  const Database = createRequire(path.join(root, 'package.json'))('better-sqlite3');
  const { newId } = await import(path.join(root, 'dist/ids.js'));
  const db = new Database(path.join(dataDir, 'reference.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.exec(`CREATE TABLE organizations (id text PRIMARY KEY);
    CREATE TABLE meters (id text PRIMARY KEY, org_id text NOT NULL REFERENCES organizations (id));
    CREATE TABLE meter_readings (id text PRIMARY KEY, org_id text NOT NULL REFERENCES organizations (id), meter_id text NOT NULL REFERENCES meters (id),
      value double precision NOT NULL, read_at text NOT NULL, external_id text, reset integer NOT NULL, created_at text NOT NULL);
    CREATE INDEX meter_readings_meter_read ON meter_readings (meter_id, read_at, id);
    CREATE UNIQUE INDEX meter_readings_meter_external ON meter_readings (meter_id, external_id);
    INSERT INTO organizations (id) VALUES ('org_reference'); INSERT INTO meters (id, org_id) VALUES ('mtr_reference', 'org_reference');`);
  const insert = db.prepare(`INSERT INTO meter_readings (id, org_id, meter_id, value, read_at, external_id, reset, created_at) VALUES (?, 'org_reference', 'mtr_reference', ?, ?, ?, 0, ?)`);
  const store = db.transaction((rows, createdAt) => {
    for (const r of rows) insert.run(newId('meterReading'), r.value, r.readAt, r.externalId, createdAt);
  });
  run = async (readings) => store(readings, new Date().toISOString());
  close = async () => db.close();
} else {
  const { buildApp } = await import(path.join(root, 'dist/app.js'));
  const context = await openCheckoutContext(root, dataDir, { WO_RATE_LIMIT_PER_MINUTE: '0' });
  const app = await buildApp(context);
  await app.ready();
  const org = await context.organizations.create('cg');
  const { key } = await context.apiKeys.create({ orgId: org.id, name: 'cg', scopes: ['schedules:write', 'schedules:read'], createdBy: 'cg' });
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'accept-encoding': 'gzip, deflate' };
  const meter = (await app.inject({ method: 'POST', url: '/api/v1/meters', headers, payload: { name: 'Run hours', unit: 'h', kind: 'cumulative' } })).json();
  for (const job of context.backgroundJobs) job.start();
  run = async (readings) => {
    const response = await app.inject({ method: 'POST', url: `/api/v1/meters/${meter.id}/readings`, headers, payload: JSON.stringify({ readings }) });
    if (response.statusCode !== 200) throw new Error(`readings answered ${response.statusCode}: ${response.body.slice(0, 300)}`);
  };
  close = async () => {
    await app.close();
    await context.close();
  };
}
for (let i = 0; i < warm; i++) await run(batch());
// Built before counting: the client's part (the reference's as well).
const batches = Array.from({ length: total }, batch);
countInstructions(true);
for (const readings of batches) await run(readings);
countInstructions(false);
console.log(`${mode}: ${total} batches of ${PER_BATCH} (after ${warm} of warm-up)`);
await close();
rmSync(dataDir, { recursive: true, force: true });
