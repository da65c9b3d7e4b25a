import { sql } from 'kysely';
import type { VersionedMigration } from '../migrate.js';

/**
 * Comments and attachments of work orders. An attachment's bytes live in the database, in chunks
 * (`attachment_chunks`), so that every API process of a PostgreSQL deployment reaches them without a
 * shared disk and the embedded default needs nothing more (docs/architecture.md, "Attachments").
 *
 * An upload writes its chunks as the body arrives, each in its own short statement: one transaction
 * around the whole upload would hold SQLite's single write lock, or a pooled PostgreSQL connection,
 * for as long as a slow client takes to send. The row is `uploading` until its last chunk is in, and
 * only then `stored`, in the transaction that emits its event; nothing reads an `uploading` row, and
 * the sweeper deletes those a killed process left behind.
 *
 * Every statement is `IF NOT EXISTS`: SQLite migrations are not transactional (see 0009).
 */
export const workOrderActivity: VersionedMigration = {
  name: '0015-work-order-activity',
  async up(db, dialect) {
    const bytes = dialect === 'postgres' ? sql.raw('bytea') : sql.raw('blob');
    const bigint = dialect === 'postgres' ? sql.raw('bigint') : sql.raw('integer');

    await sql`
      CREATE TABLE IF NOT EXISTS record_comments (
        id text PRIMARY KEY,
        org_id text NOT NULL REFERENCES organizations (id),
        record_id text NOT NULL REFERENCES records (id),
        body text NOT NULL,
        author_key_id text NOT NULL,
        author_name text NOT NULL,
        created_at text NOT NULL
      )`.execute(db);
    // a work order's comments, oldest first (ids sort by creation time)
    await sql`CREATE INDEX IF NOT EXISTS record_comments_record ON record_comments (org_id, record_id, id)`.execute(db);

    await sql`
      CREATE TABLE IF NOT EXISTS attachments (
        id text PRIMARY KEY,
        org_id text NOT NULL REFERENCES organizations (id),
        record_id text NOT NULL REFERENCES records (id),
        filename text NOT NULL,
        media_type text NOT NULL,
        state text NOT NULL,
        size ${bigint} NOT NULL,
        sha256 text,
        chunk_bytes integer NOT NULL,
        evidence_at text,
        created_at text NOT NULL
      )`.execute(db);
    // a work order's attachments, oldest first
    await sql`CREATE INDEX IF NOT EXISTS attachments_record ON attachments (org_id, record_id, id)`.execute(db);
    // the sweeper's "uploads abandoned before this instant" scan, small however many files are stored
    await sql`CREATE INDEX IF NOT EXISTS attachments_uploading ON attachments (created_at) WHERE state = 'uploading'`.execute(db);

    await sql`
      CREATE TABLE IF NOT EXISTS attachment_chunks (
        attachment_id text NOT NULL REFERENCES attachments (id) ON DELETE CASCADE,
        n integer NOT NULL,
        bytes ${bytes} NOT NULL,
        PRIMARY KEY (attachment_id, n)
      )`.execute(db);
    if (dialect === 'postgres') {
      // Photos and PDFs are already compressed: TOAST would try to compress every chunk in vain.
      await sql`ALTER TABLE attachment_chunks ALTER COLUMN bytes SET STORAGE EXTERNAL`.execute(db);
    }
  },
  async down(db) {
    await sql`DROP TABLE IF EXISTS attachment_chunks`.execute(db);
    await sql`DROP TABLE IF EXISTS attachments`.execute(db);
    await sql`DROP TABLE IF EXISTS record_comments`.execute(db);
  },
};
