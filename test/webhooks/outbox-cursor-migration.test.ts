import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Migrator, type Migration } from 'kysely';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { sqliteOutboxProgress } from '../../src/events/outbox-progress-sqlite.js';
import { purgeDispatchedEvents } from '../../src/events/outbox.js';
import { EventDispatcher } from '../../src/webhooks/dispatcher.js';
import { systemClock } from '../../src/clock.js';

/** Runs `check` on a SQLite database at the schema before the cursor, with five events of which `dispatched` were dispatched. */
async function withDatabaseBeforeCursor(dispatched: number, check: (database: Database) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'wo-cursor-'));
  const database = openDatabase({ sqlitePath: path.join(dir, 'wo.sqlite') });
  const byName: Record<string, Migration> = {};
  for (const m of migrations) byName[m.name] = { up: (db) => m.up(db, 'sqlite') };
  const migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => byName } });
  assert.equal((await migrator.migrateTo('0007-create-path-indexes')).error, undefined);
  const now = new Date().toISOString();
  await database.db.insertInto('organizations').values({ id: 'org_m', name: 'm', created_at: now }).execute();
  for (let i = 1; i <= 5; i++) {
    await database.db
      .insertInto('outbox_events')
      .values({ id: `evt_${i}`, org_id: 'org_m', type: 'record.created', payload: '{}', created_at: now, dispatched_at: i <= dispatched ? now : null })
      .execute();
  }
  try {
    await check(database);
  } finally {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// An existing SQLite database moves from per-row flags to the dispatcher's cursor without losing or
// repeating an event: the cursor starts just before the first event the old dispatcher had not handled.
describe('outbox cursor migration (SQLite)', () => {
  it('starts the cursor before the first undispatched event, and the dispatcher carries on from there', async () => {
    await withDatabaseBeforeCursor(3, async (database) => {
      // 0008 runs first; later migrations follow it.
      assert.equal((await migrateToLatest(database))[0], '0008-outbox-cursor');
      const progress = sqliteOutboxProgress;
      assert.equal(await progress.cursor(database.db), 3);
      assert.equal(await progress.pendingCount(database.db), 2);
      const dispatcher = new EventDispatcher(database.db, sqliteOutboxProgress, systemClock);
      assert.deepEqual(await dispatcher.dispatchBatch(), { events: 2, deliveries: 0, pending: 0, full: false });
      assert.equal(await progress.cursor(database.db), 5);
      assert.deepEqual(await dispatcher.dispatchBatch(), { events: 0, deliveries: 0, pending: 0, full: false });
    });
  });

  it('starts after the last event when everything was dispatched, and after the last seq ever used when the outbox was purged empty', async () => {
    await withDatabaseBeforeCursor(5, async (database) => {
      // The quiet system whose dispatched history was also swept by retention: no row is left.
      await database.db.deleteFrom('outbox_events').execute();
      // 0008 runs first; later migrations follow it.
      assert.equal((await migrateToLatest(database))[0], '0008-outbox-cursor');
      const progress = sqliteOutboxProgress;
      assert.equal(await progress.cursor(database.db), 5, 'AUTOINCREMENT remembers seq 5: nothing older is dispatched again');
      await database.db.insertInto('outbox_events').values({ id: 'evt_6', org_id: 'org_m', type: 'record.created', payload: '{}', created_at: new Date().toISOString(), dispatched_at: null }).execute();
      assert.equal(await progress.pendingCount(database.db), 1);
      assert.deepEqual(await new EventDispatcher(database.db, sqliteOutboxProgress, systemClock).dispatchBatch(), { events: 1, deliveries: 0, pending: 0, full: false });
    });
  });

  it('with every event dispatched and kept, starts at the last one; the old flags still count for retention', async () => {
    await withDatabaseBeforeCursor(5, async (database) => {
      // 0008 runs first; later migrations follow it.
      assert.equal((await migrateToLatest(database))[0], '0008-outbox-cursor');
      assert.equal(await sqliteOutboxProgress.cursor(database.db), 5);
      assert.equal(await purgeDispatchedEvents(database.db, sqliteOutboxProgress, new Date(Date.now() + 60_000).toISOString()), 5);
    });
  });

  it('can run again after being interrupted halfway (SQLite migrations are not transactional)', async () => {
    await withDatabaseBeforeCursor(2, async (database) => {
      const cursorMigration = migrations.find((m) => m.name === '0008-outbox-cursor')!;
      await cursorMigration.up(database.db, 'sqlite');
      await cursorMigration.up(database.db, 'sqlite');
      assert.equal(await sqliteOutboxProgress.cursor(database.db), 2);
    });
  });
});
