import { sql } from 'kysely';
import type { VersionedMigration } from '../migrate.js';

export const foundation: VersionedMigration = {
  name: '0001-foundation',
  async up(db, dialect) {
    await db.schema
      .createTable('organizations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('api_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('prefix', 'text', (c) => c.notNull())
      .addColumn('key_hash', 'text', (c) => c.notNull().unique()) // authentication looks keys up by hash
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text')
      .addColumn('revoked_at', 'text')
      .addColumn('last_used_at', 'text')
      .addColumn('created_by', 'text', (c) => c.notNull())
      .execute();
    // listing an organization's keys
    await db.schema.createIndex('api_keys_org').on('api_keys').columns(['org_id', 'created_at']).execute();

    await db.schema
      .createTable('categories')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addUniqueConstraint('categories_org_name', ['org_id', 'name'])
      .execute();
    // category list, newest first
    await db.schema.createIndex('categories_org_created').on('categories').columns(['org_id', 'created_at', 'id']).execute();

    await db.schema
      .createTable('records')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('category_id', 'text', (c) => c.notNull().references('categories.id'))
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('address', 'text', (c) => c.notNull())
      .addColumn('requester_name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('priority', 'text', (c) => c.notNull())
      .addColumn('due_at', 'text')
      .addColumn('assignee', 'text')
      .addColumn('asset_id', 'text')
      .addColumn('location_id', 'text')
      .addColumn('external_ref', 'text')
      .addColumn('metadata', 'text', (c) => c.notNull())
      .addColumn('resolution_notes', 'text')
      .addColumn('completed_at', 'text')
      .addColumn('closed_at', 'text')
      .addColumn('cancelled_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .execute();
    // the default list (newest first) and offset paging over it: an index-only scan
    await db.schema.createIndex('records_org_created').on('records').columns(['org_id', 'created_at', 'id']).execute();
    // the list filtered by status
    await db.schema.createIndex('records_org_status_created').on('records').columns(['org_id', 'status', 'created_at', 'id']).execute();
    // "is this category still used?" before deleting it, and the categoryId filter
    await db.schema.createIndex('records_category').on('records').columns(['category_id', 'created_at', 'id']).execute();
    // incremental sync: updatedAfter
    await db.schema.createIndex('records_org_updated').on('records').columns(['org_id', 'updated_at']).execute();
    // an asset's / a location's work orders
    await db.schema.createIndex('records_asset').on('records').columns(['asset_id', 'created_at', 'id']).execute();
    await db.schema.createIndex('records_location').on('records').columns(['location_id', 'created_at', 'id']).execute();

    await db.schema
      .createTable('record_events')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('record_id', 'text', (c) => c.notNull().references('records.id'))
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('from_status', 'text')
      .addColumn('to_status', 'text')
      .addColumn('actor_key_id', 'text')
      .addColumn('data', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    // a record's history in order
    await db.schema.createIndex('record_events_record').on('record_events').columns(['record_id', 'id']).execute();

    await db.schema
      .createTable('record_counters')
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('count', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('record_counters_pk', ['org_id', 'status'])
      .execute();

    await db.schema
      .createTable('outbox_events')
      .addColumn('seq', dialect === 'postgres' ? 'bigserial' : 'integer', (c) =>
        dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
      )
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('dispatched_at', 'text')
      .execute();
    // the dispatcher's "next undispatched events" scan stays small however long the outbox grows
    await sql`CREATE INDEX outbox_events_pending ON outbox_events (seq) WHERE dispatched_at IS NULL`.execute(db);

    await db.schema
      .createTable('idempotency_keys')
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('response_status', 'integer')
      .addColumn('response_headers', 'text')
      .addColumn('response_body', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('locked_until', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('idempotency_keys_pk', ['org_id', 'key'])
      .execute();
    // purging expired keys
    await db.schema.createIndex('idempotency_keys_created').on('idempotency_keys').columns(['created_at']).execute();
  },
};
