import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDatabase, type Database, type Tx } from './database.js';
import { migrateToLatest } from './migrate.js';
import { MAX_WRITE_ATTEMPTS, writeOptimistically } from './optimistic-write.js';
import { findInOrganization, updateIfVersion } from './versioned-rows.js';
import type { CategoriesTable } from '../categories/tables.js';
import { AppError } from '../errors.js';

const ORG = 'org_optimistic';
const ID = 'cat_optimistic';

describe('writeOptimistically', () => {
  let dir: string;
  let database: Database;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'wo-optimistic-'));
    database = openDatabase({ sqlitePath: path.join(dir, 'wo.sqlite') });
    await migrateToLatest(database);
    await database.db.insertInto('organizations').values({ id: ORG, name: 'Optimists', created_at: '2024-01-01T00:00:00.000Z' }).execute();
  });

  after(async () => {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(async () => {
    await database.db.deleteFrom('categories').execute();
    const at = '2024-01-01T00:00:00.000Z';
    await database.db.insertInto('categories').values({ id: ID, org_id: ORG, name: 'Plumbing', description: null, created_at: at, updated_at: at, version: 1 }).execute();
  });

  /**
   * Renames the category; `racedOnAttempts` lists the attempts on which another request changes the
   * description between this write's read and its write. SQLite has one writer, so that request's
   * UPDATE runs in the attempt's own transaction, which commits it when the attempt gives up.
   */
  async function rename(name: string, options: { acceptedVersions?: number[]; racedOnAttempts?: number[] } = {}) {
    const versionsRead: number[] = [];
    const concurrentChange = async (tx: Tx, current: CategoriesTable) => {
      await updateIfVersion(tx, 'categories', ORG, ID, current.version, { description: `changed meanwhile (${versionsRead.length})`, version: current.version + 1 });
    };
    const result = writeOptimistically(database.db, {
      noun: 'Category',
      id: ID,
      acceptedVersions: options.acceptedVersions,
      read: async (tx) => {
        const row = await findInOrganization(tx, 'categories', ORG, ID);
        if (row) versionsRead.push(row.version);
        return row;
      },
      decide: async (tx, current) => {
        if (options.racedOnAttempts?.includes(versionsRead.length)) await concurrentChange(tx, current);
        return { next: { ...current, name, version: current.version + 1 } };
      },
      write: (tx, current, next) => updateIfVersion(tx, 'categories', ORG, ID, current.version, { name: next.name, version: next.version }),
      present: (row) => row,
    });
    return { result, versionsRead };
  }

  const stored = () => database.db.selectFrom('categories').selectAll().where('id', '=', ID).executeTakeFirstOrThrow();

  it('reads the row again after losing a race and writes on top of the change that won', async () => {
    const { result, versionsRead } = await rename('Water', { racedOnAttempts: [1] });
    assert.equal((await result).version, 3);
    assert.deepEqual(versionsRead, [1, 2]);
    const row = await stored();
    assert.equal(row.name, 'Water');
    assert.equal(row.description, 'changed meanwhile (1)', 'the change that won the race is kept');
    assert.equal(row.version, 3);
  });

  it(`answers 409 conflict once ${MAX_WRITE_ATTEMPTS} attempts in a row lost their race`, async () => {
    const attempts = Array.from({ length: MAX_WRITE_ATTEMPTS }, (_, i) => i + 1);
    const { result, versionsRead } = await rename('Water', { racedOnAttempts: attempts });
    await assert.rejects(result, (error: unknown) => {
      assert.ok(error instanceof AppError);
      assert.equal(error.code, 'conflict');
      assert.equal(error.detail, 'The category is being changed by other requests; retry shortly.');
      return true;
    });
    assert.equal(versionsRead.length, MAX_WRITE_ATTEMPTS);
    assert.equal((await stored()).name, 'Plumbing');
  });

  it('answers 412 to an If-Match the row no longer matches, without retrying it', async () => {
    const stale = await rename('Water', { acceptedVersions: [0] });
    await assert.rejects(stale.result, (error: unknown) => error instanceof AppError && error.code === 'precondition_failed');
    assert.deepEqual(stale.versionsRead, [1]);

    // The If-Match held when read, but another request won the race: the fresh read no longer matches.
    const raced = await rename('Water', { acceptedVersions: [1], racedOnAttempts: [1] });
    await assert.rejects(raced.result, (error: unknown) => error instanceof AppError && error.code === 'precondition_failed');
    assert.deepEqual(raced.versionsRead, [1, 2]);
    assert.equal((await stored()).name, 'Plumbing');
  });

  it('runs the attempt again when PostgreSQL gives it up (deadlock, serialization failure)', async () => {
    let failures = 0;
    const renamed = await writeOptimistically(database.db, {
      noun: 'Category',
      id: ID,
      acceptedVersions: undefined,
      read: (tx) => findInOrganization(tx, 'categories', ORG, ID),
      decide: async (_tx, current) => ({ next: { ...current, name: 'Water', version: current.version + 1 } }),
      write: async (tx, current, next) => {
        if (failures++ === 0) throw Object.assign(new Error('deadlock detected'), { code: '40P01' });
        return updateIfVersion(tx, 'categories', ORG, ID, current.version, { name: next.name, version: next.version });
      },
      present: (row) => row,
    });
    assert.equal(failures, 2);
    assert.equal(renamed.version, 2);
    assert.equal((await stored()).name, 'Water');
  });
});
