import { sql } from 'kysely';
import { RecordListReads, type PageQuery } from './list-repository.js';
import { sqliteRecordCounts } from './record-counts-sqlite.js';
import { JSON_COLUMNS, WORK_ORDER_FIELDS } from './repository.js';

/**
 * SQLite reads the page straight off the (org_id, [status,] created_at, id) index with OFFSET; it
 * seeks the table row only for entries it returns, and a deferred join (ids first, then rows by
 * TEXT primary key) measured dearer at small offsets.
 */
const sqlitePageQuery: PageQuery = (_db, matching, walk, form) => {
  const direction = walk.order === 'newest-first' ? 'desc' : 'asc';
  const paged = matching.orderBy('created_at', direction).orderBy('id', direction).limit(walk.limit).offset(walk.offset);
  return form === 'json' ? paged.select(workOrderJsonOnSqlite.as('json')) : paged.selectAll();
};

// A work order's JSON is written by the database in exactly the bytes the response serializer
// would produce from toWorkOrder (test/records/list-json.test.ts compares them): the same keys in
// the same order, strings escaped as JSON.stringify does (SQLite's json_object does), NULL as null,
// and `metadata` embedded as the JSON text we stored, which JSON.stringify wrote in the first place.
const workOrderJsonOnSqlite = sql<string>`json_object(${sql.join(
  WORK_ORDER_FIELDS.map(([key, column]) => sql`${sql.lit(key)}, ${JSON_COLUMNS.has(column) ? sql`json(${sql.ref(column)})` : sql.ref(column)}`),
)})`;

/** SQLite's work-order lists: every page through the shared reads (list-repository.ts). */
export const sqliteRecordLists = new RecordListReads(sqliteRecordCounts, sqlitePageQuery);
