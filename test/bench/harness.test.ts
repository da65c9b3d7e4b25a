// The benchmark harness's own moving parts (bench/): the fast SQLite seeding helper and the baseline
// server. The PostgreSQL side (bench/postgres/) is tested in postgres-harness.test.ts.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { createContext, type AppContext } from '../../src/context.js';
import { countersAgainstRows, seedCategory, seedRecords } from '../../bench/lib/seed-records.js';
import { removeDataDir, startBenchScript, temporaryDataDir } from '../../bench/lib/processes.js';
import { BENCH_CUSTOM_FIELDS, FILTER, seededFieldValues, seededMatches } from '../../bench/lib/checklists-setup.js';
import type { RecordFilter } from '../../src/records/list-repository.js';

describe('benchmark harness', () => {
  let dataDir: string;
  let context: AppContext;

  before(async () => {
    dataDir = temporaryDataDir();
    context = await createContext(loadConfig({ WO_DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), { logger: pino({ level: 'silent' }) });
  });

  after(async () => {
    await context.close();
    removeDataDir(dataDir);
  });

  it('seeds exactly the requested number of work orders and keeps the status counters exact across two rounds', async () => {
    const sqlitePath = path.join(dataDir, 'wo.sqlite');
    const org = await context.organizations.create('Seeded org');
    const other = await context.organizations.create('Untouched org');
    const categoryId = 'cat_01BENCHTESTCATEGORY00000000';
    seedCategory(sqlitePath, org.id, categoryId);

    const first = seedRecords(sqlitePath, { orgId: org.id, categoryId, count: 1_000 });
    const second = seedRecords(sqlitePath, { orgId: org.id, categoryId, count: 537 });
    assert.equal(first.totalInOrg, 1_000);
    assert.equal(second.totalInOrg, 1_537);

    const { counters, rows } = countersAgainstRows(sqlitePath, org.id);
    assert.deepEqual(counters, rows);
    assert.equal(Object.values(rows).reduce((sum, n) => sum + n, 0), 1_537);
    assert.deepEqual(countersAgainstRows(sqlitePath, other.id), { counters: {}, rows: {} });

    // The service itself agrees: `total` from the counters, and pages walk the seeded rows newest first.
    const page = await context.records.list(org.id, {}, { limit: 50, offset: 1_500 });
    assert.equal(page.total, 1_537);
    assert.equal(page.records.length, 37);
    const open = await context.records.list(org.id, { status: 'OPEN' }, { limit: 1, offset: 0 });
    assert.equal(open.total, rows.OPEN);
    const newest = await context.records.list(org.id, {}, { limit: 3, offset: 0 });
    assert.ok(newest.records[0]!.createdAt > newest.records[1]!.createdAt);
    assert.ok(newest.records[1]!.createdAt > newest.records[2]!.createdAt);
  });

  it('seeds custom-field values that the cf. filters find and the work orders answer, exactly as many as seeded', async () => {
    const sqlitePath = path.join(dataDir, 'wo.sqlite');
    const org = await context.organizations.create('Seeded fields org');
    for (const field of BENCH_CUSTOM_FIELDS) await context.customFields.create(org.id, { ...field, entity: 'record' } as Parameters<typeof context.customFields.create>[1]);
    const categoryId = 'cat_01BENCHTESTCATEGORY00000001';
    seedCategory(sqlitePath, org.id, categoryId);
    seedRecords(sqlitePath, { orgId: org.id, categoryId, count: 1_000, customFields: seededFieldValues });

    const filtered = await context.records.list(org.id, { [`cf.${FILTER.key}`]: FILTER.value } as RecordFilter, { limit: 50, offset: 0 });
    assert.equal(filtered.total, seededMatches(0, 1_000));
    assert.equal(filtered.total, 400);
    assert.equal(filtered.records.length, 50);
    for (const record of filtered.records) assert.equal(record.customFields[FILTER.key], FILTER.value);
    const newest = await context.records.list(org.id, {}, { limit: 1, offset: 0 });
    assert.deepEqual(newest.records[0]!.customFields, seededFieldValues(0));
    const floors = await context.records.list(org.id, { 'cf.floor[gte]': '10' } as RecordFilter, { limit: 1, offset: 0 });
    assert.equal(floors.total, Array.from({ length: 1_000 }, (_, serial) => seededFieldValues(serial).floor as number).filter((floor) => floor >= 10).length);
  });

  it('starts a baseline server that answers a small JSON body', async () => {
    const baseline = await startBenchScript('baseline-server.ts');
    try {
      const response = await fetch(baseline.baseUrl);
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(((await response.json()) as { status: string }).status, 'ok');
    } finally {
      await baseline.stop();
    }
    assert.notEqual(await baseline.exited, undefined);
  });
});
