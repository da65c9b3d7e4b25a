// The PostgreSQL benchmark's own moving parts (bench/postgres/): what the wait samples add up to, and
// the fast seeding (on PostgreSQL only when WO_TEST_DATABASE_URL is set).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { seedCategoryOnPostgres, seedRecordsOnPostgres } from '../../bench/postgres/seed-records.js';
import { BENCH_CUSTOM_FIELDS, FILTER, seededFieldValues, seededMatches } from '../../bench/lib/checklists-setup.js';
import type { RecordFilter } from '../../src/records/list-repository.js';
import { describeWaits, summarizeWaits, UNATTRIBUTED, type ActiveBackend } from '../../bench/postgres/wait-samples.js';
import { POSTGRES_URL } from '../helpers/databases.js';
import { startTestApp } from '../helpers/test-app.js';

const onCpu: ActiveBackend = { wait: 'none', lockRelation: null };
const onCounters: ActiveBackend = { wait: 'Lock:transactionid', lockRelation: 'record_counters' };
const onTuple: ActiveBackend = { wait: 'Lock:tuple', lockRelation: 'records' };
const unattributed: ActiveBackend = { wait: 'Lock:transactionid', lockRelation: null };
const walWrite: ActiveBackend = { wait: 'LWLock:WALWrite', lockRelation: null };

describe('PostgreSQL wait samples', () => {
  it('counts active backends by wait event, most frequent first, and lock waits by table', () => {
    const summary = summarizeWaits([[onCounters, onCounters, onCpu], [onCounters, walWrite, unattributed], [], [onTuple, onCpu]]);
    assert.equal(summary.samples, 4);
    assert.equal(summary.activeBackends, 8);
    assert.deepEqual(Object.entries(summary.byWait), [
      ['Lock:transactionid', 4],
      ['none', 2],
      ['Lock:tuple', 1],
      ['LWLock:WALWrite', 1],
    ]);
    assert.deepEqual(summary.lockWaitsByRelation, { record_counters: 3, [UNATTRIBUTED]: 1, records: 1 });
    assert.equal(summary.recordCountersLockShare, 0.375);
  });

  it('reports no share at all when no backend was ever active', () => {
    const summary = summarizeWaits([[], []]);
    assert.deepEqual(summary, { samples: 2, activeBackends: 0, byWait: {}, lockWaitsByRelation: {}, recordCountersLockShare: 0 });
    assert.equal(describeWaits(summary), '2 samples, no active backend');
  });

  it('describes a summary in one line: mean active backends, the top waits, the record_counters share', () => {
    const summary = summarizeWaits([[onCounters, onCounters, onCpu], [onCounters, walWrite]]);
    assert.equal(describeWaits(summary, 2), '2.5 active: Lock:transactionid 60%, LWLock:WALWrite 20%; record_counters locks 60%');
  });
});

describe('PostgreSQL seeding', { skip: POSTGRES_URL ? false : 'WO_TEST_DATABASE_URL is not set' }, () => {
  it('seeds exactly the requested number of work orders and keeps the status counts exact across two rounds', async () => {
    const harness = await startTestApp('postgres');
    try {
      const schema = harness.context.database.schema!;
      const url = new URL(POSTGRES_URL!);
      url.searchParams.set('options', `-c search_path=${schema}`);
      const org = await harness.context.organizations.create('Seeded org');
      const categoryId = 'cat_01BENCHTESTCATEGORY00000000';
      await seedCategoryOnPostgres(url.toString(), org.id, categoryId);

      const first = await seedRecordsOnPostgres(url.toString(), { orgId: org.id, categoryId, count: 1_000 });
      const second = await seedRecordsOnPostgres(url.toString(), { orgId: org.id, categoryId, count: 537 });
      assert.equal(first.totalInOrg, 1_000);
      assert.equal(second.totalInOrg, 1_537);

      // The service agrees: `total` from the counters, and pages walk the seeded rows newest first.
      const page = await harness.context.records.list(org.id, {}, { limit: 50, offset: 1_500 });
      assert.equal(page.total, 1_537);
      assert.equal(page.records.length, 37);
      const open = await harness.context.records.list(org.id, { status: 'OPEN' }, { limit: 1, offset: 0 });
      assert.equal(open.total, (first.byStatus.OPEN ?? 0) + (second.byStatus.OPEN ?? 0));
      const newest = await harness.context.records.list(org.id, {}, { limit: 3, offset: 0 });
      assert.ok(newest.records[0]!.createdAt > newest.records[1]!.createdAt);
      assert.ok(newest.records[1]!.createdAt > newest.records[2]!.createdAt);
    } finally {
      await harness.close();
    }
  });

  it('seeds custom-field values that the cf. filters find and the work orders answer, exactly as many as seeded', async () => {
    const harness = await startTestApp('postgres');
    try {
      const schema = harness.context.database.schema!;
      const url = new URL(POSTGRES_URL!);
      url.searchParams.set('options', `-c search_path=${schema}`);
      const { context } = harness;
      const org = await context.organizations.create('Seeded fields org');
      for (const field of BENCH_CUSTOM_FIELDS) await context.customFields.create(org.id, { ...field, entity: 'record' } as Parameters<typeof context.customFields.create>[1]);
      const categoryId = 'cat_01BENCHTESTCATEGORY00000001';
      await seedCategoryOnPostgres(url.toString(), org.id, categoryId);
      await seedRecordsOnPostgres(url.toString(), { orgId: org.id, categoryId, count: 1_000, customFields: seededFieldValues });

      const filtered = await context.records.list(org.id, { [`cf.${FILTER.key}`]: FILTER.value } as RecordFilter, { limit: 50, offset: 0 });
      assert.equal(filtered.total, seededMatches(0, 1_000));
      assert.equal(filtered.records.length, 50);
      for (const record of filtered.records) assert.equal(record.customFields[FILTER.key], FILTER.value);
      const newest = await context.records.list(org.id, {}, { limit: 1, offset: 0 });
      assert.deepEqual(newest.records[0]!.customFields, seededFieldValues(0));
      const floors = await context.records.list(org.id, { 'cf.floor[gte]': '10' } as RecordFilter, { limit: 1, offset: 0 });
      assert.equal(floors.total, Array.from({ length: 1_000 }, (_, serial) => seededFieldValues(serial).floor as number).filter((floor) => floor >= 10).length);
    } finally {
      await harness.close();
    }
  });
});
