import { sql } from 'kysely';
import type { VersionedMigration } from '../migrate.js';

import { addColumn } from './add-column.js';

type MigrationDb = Parameters<VersionedMigration['up']>[0];

const ATTACHMENT_COLUMNS = 'id, org_id, record_id, filename, media_type, state, size, sha256, chunk_bytes, evidence_at, created_at';

/**
 * SQLite cannot drop a NOT NULL: the table is rebuilt as SQLite's documentation describes (foreign
 * keys off, new table, copy, drop, rename), which keeps `attachment_chunks` and its bytes in place:
 * only the small metadata rows are copied. Each step can run again after a crash part-way.
 */
async function rebuildSqliteAttachments(db: MigrationDb): Promise<void> {
  const columns = await sql<{ name: string; notnull: number }>`SELECT name, "notnull" FROM pragma_table_info('attachments')`.execute(db);
  const recordId = columns.rows.find((column) => column.name === 'record_id');
  if (recordId && !recordId.notnull) return;
  await sql`PRAGMA foreign_keys = OFF`.execute(db);
  try {
    if (recordId) {
      await sql`DROP TABLE IF EXISTS attachments_rebuilt`.execute(db);
      await sql`
        CREATE TABLE attachments_rebuilt (
          id text PRIMARY KEY,
          org_id text NOT NULL REFERENCES organizations (id),
          record_id text REFERENCES records (id),
          filename text NOT NULL,
          media_type text NOT NULL,
          state text NOT NULL,
          size integer NOT NULL,
          sha256 text,
          chunk_bytes integer NOT NULL,
          evidence_at text,
          created_at text NOT NULL,
          request_id text
        )`.execute(db);
      await sql`INSERT INTO attachments_rebuilt (${sql.raw(ATTACHMENT_COLUMNS)}) SELECT ${sql.raw(ATTACHMENT_COLUMNS)} FROM attachments`.execute(db);
      await sql`DROP TABLE attachments`.execute(db);
    }
    await sql`ALTER TABLE attachments_rebuilt RENAME TO attachments`.execute(db);
    await sql`CREATE INDEX IF NOT EXISTS attachments_record ON attachments (org_id, record_id, id)`.execute(db);
    await sql`CREATE INDEX IF NOT EXISTS attachments_uploading ON attachments (created_at) WHERE state = 'uploading'`.execute(db);
  } finally {
    await sql`PRAGMA foreign_keys = ON`.execute(db);
  }
}

/**
 * Work requests and public intake (docs/requests.md).
 *
 * A request's photos are rows of `attachments` owned by the request (`request_id`, `record_id`
 * null); approving it sets their `record_id` in the approval's transaction, so the work order lists
 * the very same rows and chunks: the bytes are stored once. Hence `attachments.record_id` may now
 * be null. Columns added to existing tables carry no default, so adding them rewrites no row.
 */
export const workRequests: VersionedMigration = {
  name: '0027-work-requests',
  async up(db, dialect) {
    await sql`
      CREATE TABLE IF NOT EXISTS intake_links (
        id text PRIMARY KEY,
        org_id text NOT NULL REFERENCES organizations (id),
        name text NOT NULL,
        location_id text,
        asset_id text,
        category_id text,
        enabled integer NOT NULL,
        token_hash text NOT NULL,
        created_at text NOT NULL,
        updated_at text NOT NULL,
        version integer NOT NULL
      )`.execute(db);
    // the token a public page presents, found by its hash
    await sql`CREATE UNIQUE INDEX IF NOT EXISTS intake_links_token ON intake_links (token_hash)`.execute(db);
    // the list, newest first
    await sql`CREATE INDEX IF NOT EXISTS intake_links_org ON intake_links (org_id, created_at, id)`.execute(db);

    await sql`
      CREATE TABLE IF NOT EXISTS work_requests (
        id text PRIMARY KEY,
        org_id text NOT NULL REFERENCES organizations (id),
        status text NOT NULL,
        channel text NOT NULL,
        intake_link_id text REFERENCES intake_links (id),
        description text NOT NULL,
        requester_name text NOT NULL,
        requester_email text,
        requester_phone text,
        title text,
        address text,
        location_id text,
        asset_id text,
        category_id text,
        record_id text,
        rejection_reason text,
        decided_at text,
        status_token_hash text,
        created_by text NOT NULL,
        created_at text NOT NULL,
        updated_at text NOT NULL,
        version integer NOT NULL
      )`.execute(db);
    // the list, newest first, and its filters by status
    await sql`CREATE INDEX IF NOT EXISTS work_requests_org ON work_requests (org_id, created_at, id)`.execute(db);
    await sql`CREATE INDEX IF NOT EXISTS work_requests_org_status ON work_requests (org_id, status, created_at)`.execute(db);
    // incremental sync (updatedAfter)
    await sql`CREATE INDEX IF NOT EXISTS work_requests_org_updated ON work_requests (org_id, updated_at)`.execute(db);
    // the requester's status page, found by its token's hash
    await sql`CREATE UNIQUE INDEX IF NOT EXISTS work_requests_status_token ON work_requests (status_token_hash) WHERE status_token_hash IS NOT NULL`.execute(db);

    await sql`
      CREATE TABLE IF NOT EXISTS intake_used_solutions (
        digest text PRIMARY KEY,
        expires_at text NOT NULL
      )`.execute(db);
    // the purge of solutions whose challenge has expired
    await sql`CREATE INDEX IF NOT EXISTS intake_used_solutions_expiry ON intake_used_solutions (expires_at)`.execute(db);

    // The request a work order was approved from; unique, so that one request makes one work order at most.
    await addColumn(db, dialect, 'records', 'request_id', 'text');
    await sql`CREATE UNIQUE INDEX IF NOT EXISTS records_request ON records (request_id) WHERE request_id IS NOT NULL`.execute(db);

    if (dialect === 'postgres') {
      await sql`ALTER TABLE attachments ALTER COLUMN record_id DROP NOT NULL`.execute(db);
      await addColumn(db, dialect, 'attachments', 'request_id', 'text');
    } else {
      await rebuildSqliteAttachments(db);
    }
    // a request's attachments, oldest first; only rows a request owns are in it
    await sql`CREATE INDEX IF NOT EXISTS attachments_request ON attachments (org_id, request_id, id) WHERE request_id IS NOT NULL`.execute(db);
  },
};
