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
  name: '0021-witnessed-checkpoints',
  async up(db, dialect) {
    const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
    await db.schema.alterTable('tlog_checkpoints').addColumn('published_at', 'text').execute();
    // 'log-signed' (no witness policy), 'witnessed' (the quorum cosigned), 'unwitnessed' (fail-open).
    await db.schema.alterTable('tlog_checkpoints').addColumn('publication', 'text', (c) => c.defaultTo('log-signed')).execute();
    // The witnesses' cosignature lines (C2SP tlog-cosignature), appended to `note` when it is served.
    await db.schema.alterTable('tlog_checkpoints').addColumn('cosignatures', 'text', (c) => c.notNull().defaultTo('')).execute();
    await sql`UPDATE tlog_checkpoints SET published_at = created_at`.execute(db);
    // A bundle's checkpoint: the first published (or witnessed) checkpoint at or after the statement's own.
    await db.schema.createIndex('tlog_checkpoints_published').on('tlog_checkpoints').column('tree_size').where(sql.ref('publication'), 'is not', null).execute();
    await db.schema.createIndex('tlog_checkpoints_witnessed').on('tlog_checkpoints').column('tree_size').where(sql.ref('publication'), '=', 'witnessed').execute();

    await db.schema
      .createTable('tlog_witnesses')
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
