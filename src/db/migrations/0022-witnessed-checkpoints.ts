import { sql } from 'kysely';
import type { VersionedMigration } from '../migrate.js';

/**
 * Witnessed checkpoints (docs/proofs.md, "Witnesses"). A signed checkpoint is now published, and its
 * statements delivered, only once it is witnessed (or, fail-open, flagged unwitnessed), so each
 * checkpoint row says when and how it was published and carries the witnesses' cosignature lines.
 * Every checkpoint stored before was published as the log signed it: the backfill says so. A release
 * before this one, which writes neither column and emits its events as it seals, gets the default
 * `publication` 'log-signed', so this release never publishes (and delivers) its checkpoints again.
 *
 * `tlog_witnesses` keeps, per witness of the policy (by its vkey), the size it last cosigned and how
 * its last submissions went: where the next submission starts, and the witness health /readyz shows.
 */
export const witnessedCheckpoints: VersionedMigration = {
  name: '0022-witnessed-checkpoints',
  async up(db, dialect) {
    // Every step may run again: SQLite migrations are not transactional (see 0009 and 0020).
    const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
    // 'log-signed' (no witness policy), 'witnessed' (the quorum cosigned), 'unwitnessed' (fail-open);
    // `cosignatures`: the witnesses' C2SP tlog-cosignature lines, appended to `note` when it is served.
    const columns: Array<[string, string]> = [
      ['published_at', 'text'],
      ['publication', "text DEFAULT 'log-signed'"],
      ['cosignatures', "text NOT NULL DEFAULT ''"],
    ];
    const existing = dialect === 'postgres' ? [] : (await sql<{ name: string }>`SELECT name FROM pragma_table_info('tlog_checkpoints')`.execute(db)).rows.map((row) => row.name);
    for (const [column, type] of columns) {
      if (dialect === 'postgres') await sql`ALTER TABLE tlog_checkpoints ADD COLUMN IF NOT EXISTS ${sql.raw(column)} ${sql.raw(type)}`.execute(db);
      else if (!existing.includes(column)) await sql`ALTER TABLE tlog_checkpoints ADD COLUMN ${sql.raw(column)} ${sql.raw(type)}`.execute(db);
    }
    await sql`UPDATE tlog_checkpoints SET published_at = created_at WHERE published_at IS NULL AND publication IS NOT NULL`.execute(db);
    // A bundle's checkpoint: the first published (or witnessed) checkpoint at or after the statement's own.
    await db.schema.createIndex('tlog_checkpoints_published').ifNotExists().on('tlog_checkpoints').column('tree_size').where(sql.ref('publication'), 'is not', null).execute();
    await db.schema.createIndex('tlog_checkpoints_witnessed').ifNotExists().on('tlog_checkpoints').column('tree_size').where(sql.ref('publication'), '=', 'witnessed').execute();

    await db.schema
      .createTable('tlog_witnesses')
      .ifNotExists()
      .addColumn('vkey', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('cosigned_size', bigint)
      .addColumn('last_attempt_at', 'text')
      .addColumn('last_success_at', 'text')
      .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('last_error', 'text')
      .execute();
  },
  async down(db) {
    await db.schema.dropTable('tlog_witnesses').execute();
    await db.schema.dropIndex('tlog_checkpoints_witnessed').execute();
    await db.schema.dropIndex('tlog_checkpoints_published').execute();
    await db.schema.alterTable('tlog_checkpoints').dropColumn('cosignatures').execute();
    await db.schema.alterTable('tlog_checkpoints').dropColumn('publication').execute();
    await db.schema.alterTable('tlog_checkpoints').dropColumn('published_at').execute();
  },
};
