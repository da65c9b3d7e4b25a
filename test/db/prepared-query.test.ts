// preparedQuery (src/db/prepared.ts) compiles a hot query once per database and fills in values per call.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { preparedListQuery, preparedListsQuery, preparedQuery } from '../../src/db/prepared.js';
import { TEST_DIALECTS } from '../helpers/databases.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const insertOrganization = preparedQuery((db, row: { id: string; name: string; created_at: string }) => db.insertInto('organizations').values(row));
const findOrganization = preparedQuery((db, p: { id: string }) => db.selectFrom('organizations').selectAll().where('id', '=', p.id));
const renameOrganization = preparedQuery((db, p: { id: string; name: string }) =>
  db.updateTable('organizations').set({ name: p.name }).where('id', '=', p.id).where('name', '!=', 'constant literal'),
);
// A list query whose list may be empty (then: every organization but none) and a caller's own parameter beside it.
const organizationsExcept = preparedListQuery((db, p: { prefix: string }, excluded: string[]) =>
  db
    .selectFrom('organizations')
    .select('id')
    .where('id', 'like', p.prefix)
    .$if(excluded.length > 0, (query) => query.where('id', 'not in', excluded))
    .orderBy('id'),
);
// Two lists of one length carry the halves of (id, name) pairs: padding must keep them aligned.
const organizationsByIdAndName = preparedListsQuery((db, _p: object, [ids, names]: [string[], string[]]) =>
  db
    .selectFrom('organizations')
    .select('id')
    .where((eb) => eb.or(ids.map((id, i) => eb.and([eb('id', '=', id), eb('name', '=', names[i]!)]))))
    .orderBy('id'),
);

for (const dialect of TEST_DIALECTS) {
  describe(`prepared queries (${dialect})`, () => {
    let testApp: TestApp;
    before(async () => {
      testApp = await startTestApp(dialect);
    });
    after(() => testApp.close());

    it('binds each call’s own values, outside and inside a transaction, like the query builder', async () => {
      const db = testApp.context.database.db;
      await insertOrganization(db, { id: 'org_prepared_1', name: 'First', created_at: '2026-01-01T00:00:00.000Z' });
      await db.transaction().execute(async (tx) => {
        await insertOrganization(tx, { id: 'org_prepared_2', name: 'Second', created_at: '2026-01-02T00:00:00.000Z' });
        const inside = await findOrganization(tx, { id: 'org_prepared_2' });
        assert.equal(inside.rows.length, 1);
      });
      const first = await findOrganization(db, { id: 'org_prepared_1' });
      const second = await db.selectFrom('organizations').selectAll().where('id', '=', 'org_prepared_2').executeTakeFirstOrThrow();
      assert.deepEqual(first.rows, [await db.selectFrom('organizations').selectAll().where('id', '=', 'org_prepared_1').executeTakeFirstOrThrow()]);
      assert.equal(second.name, 'Second');
      assert.deepEqual((await findOrganization(db, { id: 'org_missing' })).rows, []);
    });

    it('keeps literals written into the query and reports affected rows', async () => {
      const db = testApp.context.database.db;
      await insertOrganization(db, { id: 'org_prepared_3', name: 'Third', created_at: '2026-01-03T00:00:00.000Z' });
      const renamed = await renameOrganization(db, { id: 'org_prepared_3', name: 'Renamed' });
      assert.equal(Number(renamed.numAffectedRows), 1);
      const untouched = await renameOrganization(db, { id: 'org_missing', name: 'Nobody' });
      assert.equal(Number(untouched.numAffectedRows), 0);
      assert.equal((await findOrganization(db, { id: 'org_prepared_3' })).rows[0]?.name, 'Renamed');
    });

    it('stores a value that looks like a placeholder as plain data', async () => {
      const db = testApp.context.database.db;
      const lookalike = 'param:name \u2400 looks like a placeholder';
      await insertOrganization(db, { id: 'org_prepared_4', name: lookalike, created_at: '2026-01-04T00:00:00.000Z' });
      assert.equal((await findOrganization(db, { id: 'org_prepared_4' })).rows[0]?.name, lookalike);
    });

    it('a list query answers for lists of every length, each padded length compiled once', async () => {
      const db = testApp.context.database.db;
      const ids = ['org_list_1', 'org_list_2', 'org_list_3', 'org_list_4', 'org_list_5'];
      for (const [i, id] of ids.entries()) await insertOrganization(db, { id, name: `List ${i}`, created_at: '2026-01-05T00:00:00.000Z' });
      const remaining = async (excluded: string[]) => (await organizationsExcept(db, { prefix: 'org_list_%' }, excluded)).rows.map((row) => row.id);
      assert.deepEqual(await remaining([]), ids);
      assert.deepEqual(await remaining(['org_list_2']), ['org_list_1', 'org_list_3', 'org_list_4', 'org_list_5']);
      // 3 entries are padded to 4 by repeating the last; 5 to 8.
      assert.deepEqual(await remaining(['org_list_1', 'org_list_3', 'org_list_5']), ['org_list_2', 'org_list_4']);
      assert.deepEqual(await remaining(['org_list_4', 'org_list_2', 'org_list_1']), ['org_list_3', 'org_list_5']);
      assert.deepEqual(await remaining(ids), []);
      await db.transaction().execute(async (tx) => {
        assert.deepEqual((await organizationsExcept(tx, { prefix: 'org_list_%' }, ['org_list_1'])).rows.length, 4);
      });
    });

    it('lists of one length stay aligned when padded, so they can carry pairs', async () => {
      const db = testApp.context.database.db;
      for (const [id, name] of [['org_pair_1', 'One'], ['org_pair_2', 'Two'], ['org_pair_3', 'Three']]) await insertOrganization(db, { id: id!, name: name!, created_at: '2026-01-06T00:00:00.000Z' });
      const matching = async (pairs: [string, string][]) => (await organizationsByIdAndName(db, {}, [pairs.map(([id]) => id), pairs.map(([, name]) => name)])).rows.map((row) => row.id);
      // Three pairs padded to four repeat the last pair, not a mix of two.
      assert.deepEqual(await matching([['org_pair_1', 'One'], ['org_pair_2', 'Two'], ['org_pair_3', 'Three']]), ['org_pair_1', 'org_pair_2', 'org_pair_3']);
      assert.deepEqual(await matching([['org_pair_1', 'Two'], ['org_pair_2', 'Two'], ['org_pair_3', 'One']]), ['org_pair_2']);
      assert.deepEqual(await matching([['org_pair_3', 'Three']]), ['org_pair_3']);
    });
  });
}
