import { byDialect, type Database } from '../../src/db/database.js';
import type { RecordLists } from '../../src/records/list-repository.js';
import { postgresRecordLists } from '../../src/records/list-postgres.js';
import { sqliteRecordLists } from '../../src/records/list-sqlite.js';
import type { RecordCounts } from '../../src/records/record-counts.js';
import { foldRecordCountDeltas, postgresRecordCounts } from '../../src/records/record-counts-postgres.js';
import { sqliteRecordCounts } from '../../src/records/record-counts-sqlite.js';
import type { RecordsTable } from '../../src/records/tables.js';

/** A work order's storage row with only what a storage-level test varies; the rest as a plain create writes it. */
export function workOrderRow(fields: { id: string; orgId: string; categoryId: string; status: string; createdAt: string; description?: string }): RecordsTable {
  return {
    id: fields.id,
    org_id: fields.orgId,
    category_id: fields.categoryId,
    status: fields.status,
    address: '1 Test Street',
    requester_name: 'Tester',
    description: fields.description ?? `work order ${fields.id}`,
    priority: 'MEDIUM',
    due_at: null,
    assignee: null,
    asset_id: null,
    location_id: null,
    external_ref: null,
    metadata: '{}',
    resolution_notes: null,
    completed_at: null,
    closed_at: null,
    cancelled_at: null,
    created_at: fields.createdAt,
    updated_at: fields.createdAt,
    version: 1,
    source: null,
    overdue_for: null,
    assignees: '[]',
    costs: null,
    labor_minutes: 0,
    custom_fields: '{}',
    checklists: '[]',
    request_id: null,
  };
}

/**
 * The list reads and counts the records feature picks for `database` (src/records/feature.ts), and
 * its fold of count deltas (PostgreSQL; SQLite has no deltas, so none are folded).
 */
export function recordsOnDatabase(database: Database): { lists: RecordLists; counts: RecordCounts; foldCountDeltas: () => Promise<number> } {
  return byDialect(database, {
    sqlite: () => ({ lists: sqliteRecordLists, counts: sqliteRecordCounts, foldCountDeltas: async () => 0 }),
    postgres: (postgres) => ({ lists: postgresRecordLists, counts: postgresRecordCounts, foldCountDeltas: () => foldRecordCountDeltas(postgres.db) }),
  });
}
