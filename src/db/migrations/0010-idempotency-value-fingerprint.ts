import { sql } from 'kysely';
import type { VersionedMigration } from '../migrate.js';

/**
 * `idempotency_keys.value_fingerprint`: SHA-256 over method, path and the body in RFC 8785 canonical
 * form, so that a retry whose JSON was serialized again (another key order, other spacing) is the
 * same request. A second column rather than a new meaning for `fingerprint`, which keeps the raw
 * bytes: during a rolling upgrade (or after a rollback) processes of the previous release still
 * compare `fingerprint` with the raw bytes of a retry, and must keep finding the same request there.
 * Rows written by those releases have no value fingerprint (null) and are matched on the raw one.
 */
export const idempotencyValueFingerprint: VersionedMigration = {
  name: '0010-idempotency-value-fingerprint',
  // Re-runnable: SQLite migrations are not transactional (see 0009).
  async up(db, dialect) {
    if (dialect === 'postgres') {
      await sql`ALTER TABLE idempotency_keys ADD COLUMN IF NOT EXISTS value_fingerprint text`.execute(db);
      return;
    }
    const columns = await sql<{ name: string }>`SELECT name FROM pragma_table_info('idempotency_keys')`.execute(db);
    if (!columns.rows.some((column) => column.name === 'value_fingerprint')) {
      await sql`ALTER TABLE idempotency_keys ADD COLUMN value_fingerprint text`.execute(db);
    }
  },
  async down(db) {
    await sql`ALTER TABLE idempotency_keys DROP COLUMN value_fingerprint`.execute(db);
  },
};
