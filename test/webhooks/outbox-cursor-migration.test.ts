import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Migrator, type Migration } from 'kysely';
import { openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { outboxProgress } from '../../src/events/outbox-progress.js';
import { EventDispatcher } from '../../src/webhooks/dispatcher.js';
import { systemClock } from '../../src/clock.js';

// An existing SQLite database moves from per-row flags to the dispatcher's cursor without losing or
// repeating an event: the cursor starts just before the first event the old dispatcher had not handled.
describe('outbox cursor migration (SQLite)', () => {
  it('starts the cursor before the first undispatched event, and the dispatcher carries on from there', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wo-cursor-'));
    const database = openDatabase({ sqlitePath: path.join(dir, 'wo.sqlite') });
    try {
      const byName: Record<string, Migration> = {};
      for (const m of migrations) byName[m.name] = { up: (db) => m.up(db, 'sqlite') };
      const migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => byName } });
      const before = await migrator.migrateTo('0007-create-path-indexes');
      assert.equal(before.error, undefined);

      const now = new Date().toISOString();
      await database.db.insertInto('organizations').values({ id: 'org_m', name: 'm', created_at: now }).execute();
      for (let i = 1; i <= 5; i++) {
        await database.db
          .insertInto('outbox_events')
          .values({ id: `evt_${i}`, org_id: 'org_m', type: 'record.created', payload: '{}', created_at: now, dispatched_at: i <= 3 ? now : null })
          .execute();
      }
      assert.deepEqual(await migrateToLatest(database), ['0008-outbox-cursor']);

      const progress = outboxProgress('sqlite');
      assert.equal(await progress.cursor(database.db), 3);
      assert.equal(await progress.pendingCount(database.db), 2);
      const dispatcher = new EventDispatcher(database.db, 'sqlite', systemClock);
      assert.deepEqual(await dispatcher.dispatchBatch(), { events: 2, deliveries: 0 });
      assert.equal(await progress.cursor(database.db), 5);
      assert.deepEqual(await dispatcher.dispatchBatch(), { events: 0, deliveries: 0 });
    } finally {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
