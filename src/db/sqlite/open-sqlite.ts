import BetterSqlite from 'better-sqlite3';
import { Kysely } from 'kysely';
import { touchPrivateFile } from '../../private-files.js';
import type { SqliteDatabase } from '../database.js';
import type { Tables } from '../tables.js';
import { GroupCommitSqliteDialect } from './group-commit-dialect.js';
import type { GroupCommitStats } from './group-commit.js';
import { UnplannedLimitPlugin } from './unplanned-limit.js';
import { startWalCheckpointer } from './wal-checkpointer.js';

/** The embedded database at `file` (`:memory:` for one that lives as long as the process). */
export function openSqliteDatabase(file: string): SqliteDatabase {
  // @NOTE: owner-only (directory 0700, database 0600, and so its -wal and -shm files): it holds API
  // key hashes, the admin password hashes and the encrypted webhook secrets.
  if (file !== ':memory:') touchPrivateFile(file);
  const sqlite = new BetterSqlite(file);
  sqlite.pragma('journal_mode = WAL');
  // NORMAL is durable across process crashes in WAL mode (only an OS crash can lose the last commits).
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  // Savepoints (one per transaction under group commit) journal each page they first change; in memory
  // that is a copy, in a temp file (the default) it was a write, which cost an outbox insert about as
  // much as the insert itself (bench/analysis.md, session 2).
  sqlite.pragma('temp_store = MEMORY');
  const checkpointer = file === ':memory:' ? undefined : startWalCheckpointer(sqlite, file);
  const groupCommit: GroupCommitStats = { commits: 0, members: 0, failures: 0 };
  // Every LIMIT as `(? + 0)`: a bare bound LIMIT makes SQLite prepare the statement again at every run.
  const db = new Kysely<Tables>({ dialect: new GroupCommitSqliteDialect(sqlite, { stats: groupCommit }), plugins: [new UnplannedLimitPlugin()] });
  // Read straight on the connection, not through Kysely: a pragma would close the open commit group.
  const dataVersion = sqlite.prepare('PRAGMA data_version').pluck();
  return {
    db,
    dialect: 'sqlite',
    groupCommit,
    dataVersion: () => dataVersion.get() as number,
    walCheckpoints: checkpointer?.checkpoints ?? { count: 0 },
    ...(checkpointer ? { walCheckpointer: checkpointer } : {}),
    close: async () => {
      await checkpointer?.stop();
      await db.destroy();
    },
  };
}

