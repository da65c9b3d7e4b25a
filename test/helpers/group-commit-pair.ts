// Shared by the group-commit driver's tests and the fast paths' tests (src/db/sqlite-*.test.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, type Generated } from 'kysely';
import { GroupCommitSqliteDialect } from '../../src/db/sqlite/group-commit-dialect.js';
import type { GroupCommitStats } from '../../src/db/sqlite/group-commit.js';

export interface TestTables {
  items: { id: Generated<number>; label: string };
  parents: { id: number };
  children: { id: number; parent_id: number };
}

/** A real SQLite file in WAL mode, the service's settings, and a second connection to look from outside. */
export function openPair(options: { maxGroupSize?: number } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'wo-group-commit-'));
  const file = path.join(dir, 'test.sqlite');
  const sqlite = new SqliteDatabase(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.exec(`CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT NOT NULL UNIQUE);
               CREATE TABLE parents (id INTEGER PRIMARY KEY);
               CREATE TABLE children (id INTEGER PRIMARY KEY,
                 parent_id INTEGER NOT NULL REFERENCES parents (id) DEFERRABLE INITIALLY DEFERRED)`);
  const stats: GroupCommitStats = { commits: 0, members: 0, failures: 0 };
  const db = new Kysely<TestTables>({ dialect: new GroupCommitSqliteDialect(sqlite, { stats, ...options }) });
  const observer = new SqliteDatabase(file, { readonly: true });
  const committedLabels = () => (observer.prepare('SELECT label FROM items ORDER BY id').all() as { label: string }[]).map((r) => r.label);
  return {
    db,
    sqlite,
    file,
    stats,
    committedLabels,
    async close() {
      observer.close();
      await db.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
