// Times migration 0028 (custom fields and checklists) on a database holding 1M work orders, on
// SQLite and on PostgreSQL (with WO_BENCH_DATABASE_URL or WO_TEST_DATABASE_URL): the migrations
// before it run on an empty database, 1M rows are inserted with one INSERT … SELECT, then 0028 alone
// is timed. Its columns carry constant defaults, so it should not depend on the number of rows.
// Then 0030 (the counts per exact custom-field value), after one value per work order (five distinct
// values) is written: it reads custom_field_values once, so it grows with the values, not the work orders.
//   npx tsx bench/tools/migration-timing.ts [rows]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { sql } from 'kysely';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrations } from '../../src/db/migrations/index.js';
import { checklistsAndCustomFields } from '../../src/db/migrations/0028-checklists-custom-fields.js';
import { customFieldValueCounts } from '../../src/db/migrations/0030-custom-field-value-counts.js';

const ROWS = Number(process.argv[2] ?? 1_000_000);
const now = '2026-01-01T00:00:00.000Z';

async function timeOn(database: Database): Promise<{ seedMs: number; migrationMs: number; countsMs: number }> {
  const { db, dialect } = database;
  for (const migration of migrations.slice(0, migrations.indexOf(checklistsAndCustomFields))) await migration.up(db, dialect);
  await db.insertInto('organizations').values({ id: 'org_m', name: 'm', created_at: now }).execute();
  await db.insertInto('categories').values({ id: 'cat_m', org_id: 'org_m', name: 'Bench', description: null, created_at: now, updated_at: now, version: 1 }).execute();
  const seedStart = performance.now();
  const series =
    dialect === 'postgres'
      ? sql`SELECT n FROM generate_series(1, ${ROWS}) AS n`
      : sql`WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ${ROWS}) SELECT n FROM s`;
  await sql`
    INSERT INTO records (id, org_id, category_id, status, address, requester_name, description, priority, metadata, created_at, updated_at, version, assignees, labor_minutes)
    SELECT 'rec_' || n, 'org_m', 'cat_m', 'OPEN', '1 Bench Street', 'Bench', 'work order ' || n, 'MEDIUM', '{}', ${now}, ${now}, 1, '[]', 0 FROM (${series}) AS series`.execute(db);
  const seedMs = performance.now() - seedStart;
  const start = performance.now();
  await checklistsAndCustomFields.up(db, dialect);
  const migrationMs = performance.now() - start;
  const [row] = (await sql<{ n: number }>`SELECT count(*) AS n FROM records WHERE custom_fields = '{}' AND checklists = '[]'`.execute(db)).rows;
  if (Number(row!.n) !== ROWS) throw new Error(`expected ${ROWS} rows reading {} and [], found ${row!.n}`);
  for (const migration of migrations.slice(migrations.indexOf(checklistsAndCustomFields) + 1, migrations.indexOf(customFieldValueCounts))) await migration.up(db, dialect);
  await sql`
    INSERT INTO custom_field_values (entity_id, field_key, org_id, entity, text_value, number_value, created_at)
    SELECT id, 'boiler_type', org_id, 'record', 'type ' || (CAST(substr(id, 5) AS integer) % 5), NULL, created_at FROM records`.execute(db);
  const countsStart = performance.now();
  await customFieldValueCounts.up(db, dialect);
  const countsMs = performance.now() - countsStart;
  const [counted] = (await sql<{ n: number }>`SELECT sum(count) AS n FROM custom_field_value_counts`.execute(db)).rows;
  if (Number(counted!.n) !== ROWS) throw new Error(`expected ${ROWS} values counted, found ${counted!.n}`);
  return { seedMs, migrationMs, countsMs };
}

const dir = mkdtempSync(path.join(tmpdir(), 'wo-migration-'));
try {
  const sqlite = openDatabase({ sqlitePath: path.join(dir, 'wo.sqlite') });
  try {
    const result = await timeOn(sqlite);
    console.log(`sqlite: ${ROWS} work orders seeded in ${(result.seedMs / 1000).toFixed(1)} s; migration 0028 took ${result.migrationMs.toFixed(1)} ms; 0030 over ${ROWS} values took ${result.countsMs.toFixed(1)} ms`);
  } finally {
    await sqlite.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const url = process.env.WO_BENCH_DATABASE_URL ?? process.env.WO_TEST_DATABASE_URL;
if (url) {
  const name = `wo_migration_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const target = new URL(url);
  target.pathname = `/${name}`;
  const postgres = openDatabase({ url: target.toString() });
  try {
    const result = await timeOn(postgres);
    console.log(`postgres: ${ROWS} work orders seeded in ${(result.seedMs / 1000).toFixed(1)} s; migration 0028 took ${result.migrationMs.toFixed(1)} ms; 0030 over ${ROWS} values took ${result.countsMs.toFixed(1)} ms`);
  } finally {
    await postgres.close();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}
