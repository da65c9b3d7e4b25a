import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_MIGRATION_TABLE, sql } from 'kysely';
import type { Database } from '../../src/db/database.js';
import { compareWithApplied, migrateToLatest, schemaIsCurrent, SchemaVersionError } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { openEmptyDatabase, POSTGRES_URL, withSchemaChangeLock, type TestDialect } from '../helpers/databases.js';

const NEWER = '9999-a-later-release';

function migrationTable(database: Database) {
  return database.schema ? sql.table(`${database.schema}.${DEFAULT_MIGRATION_TABLE}`) : sql.table(DEFAULT_MIGRATION_TABLE);
}

/** A migrated database on which a later release then applied a migration this one does not know. */
async function withNewerSchema(dialect: TestDialect, check: (database: Database) => Promise<void>): Promise<void> {
  const { database, close } = await openEmptyDatabase(dialect);
  try {
    const migrate = () => migrateToLatest(database);
    await (dialect === 'postgres' ? withSchemaChangeLock(migrate) : migrate());
    await sql`INSERT INTO ${migrationTable(database)} (name, timestamp) VALUES (${NEWER}, ${new Date().toISOString()})`.execute(database.db);
    await check(database);
  } finally {
    await close();
  }
}

// A rolling upgrade on PostgreSQL: the new release migrates while processes of the old one run. One of
// those that starts again (after a crash, an OOM kill) must come up as those still running keep serving.
describe('a database migrated by a newer release', () => {
  it('lets a process of this release start on PostgreSQL, and `wo migrate` apply nothing', { skip: !POSTGRES_URL && 'needs WO_TEST_DATABASE_URL' }, async () => {
    await withNewerSchema('postgres', async (database) => {
      assert.deepEqual(await withSchemaChangeLock(() => migrateToLatest(database)), []);
      assert.deepEqual(await compareWithApplied(database.db, database), { newer: [NEWER], missing: [] });
      assert.equal(await schemaIsCurrent(database), true);
    });
  });

  it('refuses, naming both releases’ migrations, when it lacks one of this release’s on PostgreSQL', { skip: !POSTGRES_URL && 'needs WO_TEST_DATABASE_URL' }, async () => {
    await withNewerSchema('postgres', async (database) => {
      const latest = migrations[migrations.length - 1]!.name;
      await sql`DELETE FROM ${migrationTable(database)} WHERE name = ${latest}`.execute(database.db);
      await assert.rejects(
        withSchemaChangeLock(() => migrateToLatest(database)),
        (error: unknown) => error instanceof SchemaVersionError && error.message.includes(NEWER) && error.message.includes(`lacks ${latest}`),
      );
    });
  });

  // The README's Upgrades: on SQLite an older version must not run on a newer schema at all.
  it('refuses on SQLite with a configuration error that says what to do, not a stack trace', async () => {
    await withNewerSchema('sqlite', async (database) => {
      await assert.rejects(migrateToLatest(database), (error: unknown) => error instanceof SchemaVersionError && /newer release.*9999-a-later-release.*restore the backup/s.test(error.message));
    });
  });
});
