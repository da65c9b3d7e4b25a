import { SqliteAdapter } from 'kysely';
import type { Executor } from './database.js';

/** Whether the executor talks to the embedded SQLite database (else PostgreSQL). */
export function isSqlite(db: Executor): boolean {
  return db.getExecutor().adapter instanceof SqliteAdapter;
}
