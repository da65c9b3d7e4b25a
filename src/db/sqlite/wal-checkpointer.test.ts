import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { openDatabase } from '../database.js';
import { waitFor } from '../../../test/helpers/test-app.js';

describe('WAL checkpoints in a worker thread', () => {
  it('copies committed pages into the database file, reported by the thread', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wo-checkpointer-'));
    const file = path.join(dir, 'wo.sqlite');
    const database = openDatabase({ sqlitePath: file });
    // The job registry starts the loop with the process's roles; here, the test does.
    if (database.dialect === 'sqlite') database.walCheckpointer?.loop.start();
    try {
      await sql`CREATE TABLE filler (id INTEGER PRIMARY KEY, text TEXT NOT NULL)`.execute(database.db);
      const sizeBefore = statSync(file).size;
      // ~6 MB, ~1,500 pages: below the main connection's own fallback threshold (20,000 pages), so
      // only the checkpointer thread can have moved these pages from the WAL into the database file.
      await Promise.all(Array.from({ length: 3000 }, (_, i) => sql`INSERT INTO filler (text) VALUES (${`${i}`.padEnd(2000, '.')})`.execute(database.db)));
      // The thread reports a checkpoint by message after the file has grown: wait for both, or the
      // count below could be read in between (the test failed once under the full suite; this race is
      // the one its code allows, the failure output was not kept).
      const sizeAfter = await waitFor(() => {
        const size = statSync(file).size;
        return size >= sizeBefore + 5_000_000 && (database.walCheckpoints?.count ?? 0) > 0 ? size : undefined;
      }, 10_000, 'the database file to receive the checkpointed pages, and the thread to report it');
      assert.ok(sizeAfter > sizeBefore);
      assert.ok((database.walCheckpoints?.count ?? 0) > 0, 'the thread reported the checkpoints it ran');
      const [row] = (await sql<{ n: number }>`SELECT count(*) AS n FROM filler`.execute(database.db)).rows;
      assert.equal(row?.n, 3000);
    } finally {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
