import { sql } from 'kysely';
import type { VersionedMigration } from '../migrate.js';

/** Adds a column unless the table has it (SQLite has no ADD COLUMN IF NOT EXISTS, and its migrations are not transactional: see 0009). */
export async function addColumn(db: Parameters<VersionedMigration['up']>[0], dialect: Parameters<VersionedMigration['up']>[1], table: string, column: string, definition: string): Promise<void> {
  if (dialect === 'postgres') {
    await sql`ALTER TABLE ${sql.raw(table)} ADD COLUMN IF NOT EXISTS ${sql.raw(column)} ${sql.raw(definition)}`.execute(db);
    return;
  }
  const columns = await sql<{ name: string }>`SELECT name FROM ${sql.raw(`pragma_table_info('${table}')`)}`.execute(db);
  if (!columns.rows.some((existing) => existing.name === column)) await sql`ALTER TABLE ${sql.raw(table)} ADD COLUMN ${sql.raw(column)} ${sql.raw(definition)}`.execute(db);
}
