import { sql } from 'kysely';
import type { VersionedMigration } from '../migrate.js';

/**
 * Completion statements are signed by the sequencer, in a thread, instead of inside the completing
 * transaction (src/proofs/statement-signer.ts says why). Until then a statement is stored as JSON in
 * `proof_statements.statement_json` with status `unsigned`, its `jws` and `statement_digest` empty.
 *
 * A status of its own rather than `pending` with an empty JWS: during a rolling upgrade on
 * PostgreSQL a sequencer of the previous release still seals every `pending` row, and would append
 * an empty leaf for an unsigned one. It ignores `unsigned` rows, and its `pending` rows (signed
 * at completion) are still sealed by this release.
 */
export const unsignedStatements: VersionedMigration = {
  name: '0011-unsigned-statements',
  // Re-runnable: SQLite migrations are not transactional (see 0009).
  async up(db, dialect) {
    if (dialect === 'postgres') {
      await sql`ALTER TABLE proof_statements ADD COLUMN IF NOT EXISTS statement_json text`.execute(db);
    } else {
      const columns = await sql<{ name: string }>`SELECT name FROM pragma_table_info('proof_statements')`.execute(db);
      if (!columns.rows.some((column) => column.name === 'statement_json')) {
        await sql`ALTER TABLE proof_statements ADD COLUMN statement_json text`.execute(db);
      }
    }
    // the sequencer's "statements to sign, in order" scan, small however many are sealed
    await sql`CREATE INDEX IF NOT EXISTS proof_statements_unsigned ON proof_statements (id) WHERE status = 'unsigned'`.execute(db);
  },
  async down(db) {
    await sql`DROP INDEX IF EXISTS proof_statements_unsigned`.execute(db);
    await sql`ALTER TABLE proof_statements DROP COLUMN statement_json`.execute(db);
  },
};
