import { sql } from 'kysely';
import type { VersionedMigration } from '../migrate.js';

/**
 * RFC 3161 timestamps of checkpoints (docs/proofs.md, "RFC 3161 timestamps"). With WO_TSA_URL, each new
 * checkpoint body is timestamped by the TSA and its token (DER, base64) is kept on the checkpoint's
 * row, carried in the bundles proven against it. `tlog_timestamp_authorities` keeps how the requests
 * to the TSA go, so every process's /readyz shows the same health (as `tlog_witnesses` does).
 */
export const checkpointTimestamps: VersionedMigration = {
  name: '0025-checkpoint-timestamps',
  async up(db, dialect) {
    // Every step may run again: SQLite migrations are not transactional (see 0009 and 0020).
    const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
    if (dialect === 'postgres') {
      await sql`ALTER TABLE tlog_checkpoints ADD COLUMN IF NOT EXISTS timestamp_token text`.execute(db);
    } else {
      const existing = (await sql<{ name: string }>`SELECT name FROM pragma_table_info('tlog_checkpoints')`.execute(db)).rows.map((row) => row.name);
      if (!existing.includes('timestamp_token')) await sql`ALTER TABLE tlog_checkpoints ADD COLUMN timestamp_token text`.execute(db);
    }
    await db.schema
      .createTable('tlog_timestamp_authorities')
      .ifNotExists()
      .addColumn('url', 'text', (c) => c.primaryKey())
      .addColumn('timestamped_size', bigint)
      .addColumn('last_attempt_at', 'text')
      .addColumn('last_success_at', 'text')
      .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('last_error', 'text')
      .execute();
  },
  async down(db) {
    await db.schema.dropTable('tlog_timestamp_authorities').execute();
    await db.schema.alterTable('tlog_checkpoints').dropColumn('timestamp_token').execute();
  },
};
