// A list filtered by one exact `cf.<key>=value` reads its total from custom_field_value_counts (kept by
// the triggers of migration 0030; on PostgreSQL appended as deltas and folded). Those counts must equal
// a COUNT of the values through every kind of write, concurrent ones included, after a fold and after
// the migration runs again; and the list's total must equal a COUNT of the work orders it lists.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import type { Executor } from '../../src/db/database.js';
import { customFieldValueCounts } from '../../src/db/migrations/0030-custom-field-value-counts.js';
import { foldCustomFieldCountDeltas } from '../../src/custom-fields/value-counts-postgres.js';
import { migrations } from '../../src/db/migrations/index.js';
import { openEmptyDatabase, TEST_DIALECTS } from '../helpers/databases.js';
import { itOnEachDatabase, recordBody, seedCategory, type Tenant, type TestApp } from '../helpers/test-app.js';

type Counts = Record<string, number>;
const keyOf = (row: { entity: string; field_key: string; text_value: string; number_value: number | string }) =>
  `${row.entity} ${row.field_key}=${row.text_value}|${Number(row.number_value)}`;

/** Every value's maintained count of the organization (counts plus unfolded deltas), zeros left out. */
async function maintained(t: TestApp, orgId: string): Promise<Counts> {
  const db = t.context.database.db;
  const deltas = t.context.database.dialect === 'postgres' ? sql`UNION ALL SELECT entity, field_key, text_value, number_value, count_delta FROM custom_field_value_count_deltas WHERE org_id = ${orgId}` : sql``;
  const { rows } = await sql<{ entity: string; field_key: string; text_value: string; number_value: number; n: string }>`
    SELECT entity, field_key, text_value, number_value, sum(n) AS n FROM (
      SELECT entity, field_key, text_value, number_value, count AS n FROM custom_field_value_counts WHERE org_id = ${orgId}
      ${deltas}) AS counted
    GROUP BY entity, field_key, text_value, number_value`.execute(db);
  return Object.fromEntries(rows.filter((row) => Number(row.n) !== 0).map((row) => [keyOf(row), Number(row.n)]));
}

/** The same, counted from the values themselves. */
async function counted(db: Executor, orgId: string): Promise<Counts> {
  const { rows } = await sql<{ entity: string; field_key: string; text_value: string; number_value: number; n: string }>`
    SELECT entity, field_key, coalesce(text_value, '') AS text_value, coalesce(number_value, 0) AS number_value, count(*) AS n
    FROM custom_field_values WHERE org_id = ${orgId} GROUP BY 1, 2, 3, 4`.execute(db);
  return Object.fromEntries(rows.map((row) => [keyOf(row), Number(row.n)]));
}

async function assertCountsExact(t: TestApp, orgId: string, when: string): Promise<void> {
  const expected = await counted(t.context.database.db, orgId);
  assert.ok(Object.keys(expected).length > 0, `${when}: some values to count`);
  assert.deepEqual(await maintained(t, orgId), expected, `${when}: the maintained counts equal a COUNT of the values`);
}

/** `GET /records?cf.<key>=<value>` answers as total the number of work orders holding that value. */
async function assertListTotal(t: TestApp, tenant: Tenant, key: string, value: string | number | boolean, when: string): Promise<number> {
  const response = await tenant.request({ method: 'GET', url: `/api/v1/records?cf.${key}=${encodeURIComponent(String(value))}&limit=2` });
  assert.equal(response.statusCode, 200, response.body);
  const page = response.json() as { total: number; records: { customFields: Record<string, unknown> }[] };
  const expected = (await t.context.database.db.selectFrom('records').select('custom_fields').where('org_id', '=', tenant.orgId).execute()).filter(
    (row) => (JSON.parse(row.custom_fields) as Record<string, unknown>)[key] === value,
  ).length;
  assert.equal(page.total, expected, `${when}: cf.${key}=${value}'s total`);
  assert.equal(page.records.length, Math.min(2, expected));
  for (const record of page.records) assert.equal(record.customFields[key], value);
  return page.total;
}

async function defineFields(tenant: Tenant): Promise<Record<string, string>> {
  const ids: Record<string, string> = {};
  for (const field of [
    { key: 'boiler_type', type: 'select', options: ['gas', 'oil', 'heat_pump'] },
    { key: 'floor', type: 'number' },
    { key: 'serviced', type: 'boolean' },
    { key: 'installed', type: 'date' },
    { key: 'note', type: 'text' },
  ]) {
    const response = await tenant.request({ method: 'POST', url: '/api/v1/custom-fields', payload: { label: field.key, entity: 'record', ...field } });
    assert.equal(response.statusCode, 201, response.body);
    ids[field.key] = response.json().id as string;
  }
  return ids;
}

const valuesOf = (i: number) => ({
  boiler_type: ['gas', 'oil', 'heat_pump'][i % 3]!,
  floor: i % 4,
  serviced: i % 2 === 0,
  installed: `2020-0${(i % 3) + 1}-15`,
  note: i % 5 === 0 ? 'rear entrance' : `unit ${i}`,
});

async function create(tenant: Tenant, categoryId: string, customFields: Record<string, unknown>): Promise<string> {
  const response = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { customFields }) });
  assert.equal(response.statusCode, 201, response.body);
  return response.json().id as string;
}

async function patch(tenant: Tenant, id: string, customFields: Record<string, unknown>): Promise<void> {
  const response = await tenant.request({ method: 'PATCH', url: `/api/v1/records/${id}`, payload: { customFields } });
  assert.equal(response.statusCode, 200, response.body);
}

async function assertEveryTotal(t: TestApp, tenant: Tenant, when: string): Promise<void> {
  for (const [key, value] of [['boiler_type', 'gas'], ['boiler_type', 'oil'], ['floor', 0], ['floor', 3], ['serviced', true], ['serviced', false], ['installed', '2020-02-15'], ['note', 'rear entrance']] as const) {
    await assertListTotal(t, tenant, key, value, when);
  }
}

describe('custom-field value counts (a cf.<key>=value list total)', () => {
  itOnEachDatabase('keep each exact value counted through creates, PATCHes that change and remove values, archived fields and deletes', async (t) => {
    const tenant = await t.newTenant();
    const other = await t.newTenant();
    const categoryId = await seedCategory(tenant);
    const fields = await defineFields(tenant);
    await defineFields(other);
    const ids: string[] = [];
    for (let i = 0; i < 15; i++) ids.push(await create(tenant, categoryId, valuesOf(i)));
    await create(tenant, categoryId, {});
    await create(other, await seedCategory(other), valuesOf(0)); // another organization's gas is not this one's
    await assertCountsExact(t, tenant.orgId, 'after creates');
    assert.equal(await assertListTotal(t, tenant, 'boiler_type', 'gas', 'after creates'), 5);
    await assertEveryTotal(t, tenant, 'after creates');

    await patch(tenant, ids[0]!, { boiler_type: 'oil', floor: 3 }); // changed
    await patch(tenant, ids[3]!, { boiler_type: null, note: null }); // removed
    await patch(tenant, ids[6]!, { boiler_type: 'gas', serviced: false }); // the same value again, and a change
    await patch(tenant, ids[15 - 1]!, { floor: 2.5 });
    await assertCountsExact(t, tenant.orgId, 'after PATCHes');
    assert.equal(await assertListTotal(t, tenant, 'boiler_type', 'gas', 'after PATCHes'), 3);
    assert.equal(await assertListTotal(t, tenant, 'floor', 2.5, 'after PATCHes'), 1);
    await assertEveryTotal(t, tenant, 'after PATCHes');

    // An archived field keeps its values (and their count) and takes no new ones; removing one still counts.
    const archived = await tenant.request({ method: 'PATCH', url: `/api/v1/custom-fields/${fields.note}`, payload: { archived: true } });
    assert.equal(archived.statusCode, 200, archived.body);
    const refused = await tenant.request({ method: 'PATCH', url: `/api/v1/records/${ids[1]}`, payload: { customFields: { note: 'rear entrance' } } });
    assert.equal(refused.statusCode, 422, refused.body);
    assert.equal(await assertListTotal(t, tenant, 'note', 'rear entrance', 'archived'), 3);
    await patch(tenant, ids[5]!, { note: null });
    assert.equal(await assertListTotal(t, tenant, 'note', 'rear entrance', 'an archived value removed'), 2);
    await assertCountsExact(t, tenant.orgId, 'after an archived field');

    // Work orders have no DELETE in the API; an operator's statement removing their values counts too.
    const db = t.context.database.db;
    await db.deleteFrom('custom_field_values').where('entity_id', 'in', [ids[9]!, ids[12]!]).execute();
    await db.updateTable('records').set({ custom_fields: '{}' }).where('id', 'in', [ids[9]!, ids[12]!]).execute();
    await db.updateTable('custom_field_values').set({ text_value: 'oil' }).where('entity_id', '=', ids[2]!).where('field_key', '=', 'boiler_type').execute();
    await db.updateTable('records').set({ custom_fields: JSON.stringify({ ...valuesOf(2), boiler_type: 'oil' }) }).where('id', '=', ids[2]!).execute();
    await assertCountsExact(t, tenant.orgId, 'after hand-written deletes and an update');
    await assertEveryTotal(t, tenant, 'after hand-written deletes and an update');
    await assertCountsExact(t, other.orgId, "the other organization's");

    // A range is still counted in the index.
    const range = await tenant.request({ method: 'GET', url: '/api/v1/records?cf.floor[gte]=2' });
    assert.equal(range.json().total, (await db.selectFrom('custom_field_values').select('entity_id').where('org_id', '=', tenant.orgId).where('field_key', '=', 'floor').where('number_value', '>=', 2).execute()).length);
  });

  itOnEachDatabase('keep them exact through concurrent creates and PATCHes, folded or not, and when the migration runs again', async (t) => {
    const tenant = await t.newTenant();
    const categoryId = await seedCategory(tenant);
    await defineFields(tenant);
    const ids = await Promise.all(Array.from({ length: 24 }, (_, i) => create(tenant, categoryId, valuesOf(i))));
    await assertCountsExact(t, tenant.orgId, 'after concurrent creates');
    const postgres = t.context.database.dialect === 'postgres';
    // Concurrent PATCHes of the same work orders' values, beside creates and (PostgreSQL) folds.
    const folds = postgres ? Array.from({ length: 4 }, () => foldCustomFieldCountDeltas(t.context.database.db)) : [];
    await Promise.all([
      ...ids.map((id, i) => patch(tenant, id, { boiler_type: ['oil', 'gas'][i % 2]!, floor: i % 3 === 0 ? null : 7 })),
      ...ids.slice(0, 12).map((id) => patch(tenant, id, { serviced: true })),
      ...Array.from({ length: 12 }, (_, i) => create(tenant, categoryId, valuesOf(i + 100))),
      ...folds,
    ]);
    await assertCountsExact(t, tenant.orgId, 'after concurrent PATCHes and creates');
    await assertEveryTotal(t, tenant, 'after concurrent PATCHes and creates');

    const db = t.context.database.db;
    if (postgres) {
      const deltas = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM custom_field_value_count_deltas WHERE org_id = ${tenant.orgId}`.execute(db)).rows[0]!.n);
      await create(tenant, categoryId, valuesOf(7));
      const before = await maintained(t, tenant.orgId);
      assert.ok((await deltas()) > 0, 'writes append deltas');
      await foldCustomFieldCountDeltas(t.context.database.db);
      assert.equal(await deltas(), 0);
      assert.deepEqual(await maintained(t, tenant.orgId), before, 'a fold changes no sum');
    }

    // A start after a kill mid-migration runs it again: the counts are set again from the values.
    await db.deleteFrom('custom_field_value_counts').where('field_key', '=', 'boiler_type').execute();
    await db.updateTable('custom_field_value_counts').set({ count: 1000 }).where('field_key', '=', 'floor').where('number_value', '=', 7).execute();
    const fromCounts = await tenant.request({ method: 'GET', url: '/api/v1/records?cf.floor=7&limit=1' });
    assert.equal(fromCounts.json().total, 1000 + (postgres ? Number((await sql<{ n: string }>`SELECT coalesce(sum(count_delta), 0) AS n FROM custom_field_value_count_deltas WHERE org_id = ${tenant.orgId} AND field_key = 'floor' AND number_value = 7`.execute(db)).rows[0]!.n) : 0), 'the total is read from the counts, not counted');
    await customFieldValueCounts.up(db as never, t.context.database.dialect);
    await assertCountsExact(t, tenant.orgId, 'after the migration ran again');
    await customFieldValueCounts.up(db as never, t.context.database.dialect);
    await patch(tenant, ids[0]!, { boiler_type: 'heat_pump' });
    await create(tenant, categoryId, valuesOf(3));
    await assertCountsExact(t, tenant.orgId, 'after writes following the migration');
    await assertEveryTotal(t, tenant, 'after the migration ran again');
  });

  for (const dialect of TEST_DIALECTS) {
    it(`are counted from the values already stored when the migration first runs, from custom_field_values alone [${dialect}]`, async () => {
      const { database, close } = await openEmptyDatabase(dialect);
      try {
        const db = database.db;
        for (const migration of migrations.slice(0, migrations.indexOf(customFieldValueCounts))) await migration.up(db, dialect);
        const values = Array.from({ length: 30 }, (_, i) => ({
          entity_id: `rec_${i}`, field_key: i % 2 === 0 ? 'boiler_type' : 'floor', org_id: i < 20 ? 'org_a' : 'org_b', entity: i % 7 === 0 ? 'asset' : 'record',
          text_value: i % 2 === 0 ? ['gas', 'oil'][i % 4 === 0 ? 0 : 1]! : null, number_value: i % 2 === 0 ? null : i % 3, created_at: '2026-01-01T00:00:00.000Z',
        }));
        await db.insertInto('custom_field_values').values(values).execute();
        await customFieldValueCounts.up(db as never, dialect);
        for (const orgId of ['org_a', 'org_b']) {
          const { rows } = await sql<{ entity: string; field_key: string; text_value: string; number_value: number; count: string }>`SELECT * FROM custom_field_value_counts WHERE org_id = ${orgId}`.execute(db);
          assert.deepEqual(Object.fromEntries(rows.map((row) => [keyOf(row), Number(row.count)])), await counted(db, orgId));
        }
        const { rows } = await sql<{ count: string }>`SELECT count FROM custom_field_value_counts`.execute(db);
        assert.equal(rows.reduce((sum, row) => sum + Number(row.count), 0), 30);
      } finally {
        await close();
      }
    });
  }
});
