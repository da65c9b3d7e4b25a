// UnplannedLimitPlugin (src/db/sqlite/unplanned-limit.ts): on SQLite every LIMIT stays a bound parameter
// inside an expression the planner does not evaluate, and still limits exactly as written.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { preparedQuery } from '../../src/db/prepared.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const organizationsPage = preparedQuery((db, p: { limit: number; offset: number }) =>
  db.selectFrom('organizations').select('id').where('id', 'like', 'org_limit_%').orderBy('id').limit(p.limit).offset(p.offset),
);
const firstOrganization = preparedQuery((db) => db.selectFrom('organizations').select('id').where('id', 'like', 'org_limit_%').orderBy('id').limit(1));

describe('LIMIT on SQLite', () => {
  let testApp: TestApp;
  before(async () => {
    testApp = await startTestApp('sqlite');
    const db = testApp.context.database.db;
    for (let i = 0; i < 5; i++) await db.insertInto('organizations').values({ id: `org_limit_${i}`, name: `Limit ${i}`, created_at: '2026-01-01T00:00:00.000Z' }).execute();
  });
  after(() => testApp.close());

  it('is compiled as a bound parameter the planner cannot read', () => {
    const compiled = testApp.context.database.db.selectFrom('organizations').select('id').limit(3).offset(1).compile();
    assert.match(compiled.sql, /limit \(\? \+ 0\) offset \?$/);
    assert.deepEqual(compiled.parameters, [3, 1]);
  });

  it('limits and offsets exactly as written, through the query builder and prepared queries, in and out of transactions', async () => {
    const db = testApp.context.database.db;
    const ids = (rows: { id: string }[]) => rows.map((row) => row.id);
    assert.deepEqual(ids(await db.selectFrom('organizations').select('id').where('id', 'like', 'org_limit_%').orderBy('id').limit(2).execute()), ['org_limit_0', 'org_limit_1']);
    assert.deepEqual(ids(await db.selectFrom('organizations').select('id').where('id', 'like', 'org_limit_%').limit(0).execute()), []);
    // One compiled statement, different limits per call.
    assert.deepEqual(ids((await organizationsPage(db, { limit: 1, offset: 0 })).rows), ['org_limit_0']);
    assert.deepEqual(ids((await organizationsPage(db, { limit: 3, offset: 1 })).rows), ['org_limit_1', 'org_limit_2', 'org_limit_3']);
    assert.deepEqual(ids((await organizationsPage(db, { limit: 10, offset: 4 })).rows), ['org_limit_4']);
    await db.transaction().execute(async (tx) => {
      assert.deepEqual(ids((await organizationsPage(tx, { limit: 2, offset: 3 })).rows), ['org_limit_3', 'org_limit_4']);
      assert.deepEqual(ids((await firstOrganization(tx, {})).rows), ['org_limit_0']);
    });
  });
});
