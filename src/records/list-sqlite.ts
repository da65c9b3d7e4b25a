import { sql } from 'kysely';
import { IN_ORGANIZATION } from '../db/organization-check.js';
import { preparedQuery } from '../db/prepared.js';
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

// GET /records/{id}: the work order's JSON as a list page writes it, and its version for the ETag.
const oneJsonQuery = preparedQuery((db, p: { orgId: string; id: string }) =>
  db.selectFrom('records').select([workOrderJsonOnSqlite.as('json'), 'version']).where('id', '=', p.id).where('org_id', IN_ORGANIZATION, p.orgId),
);

/** SQLite's work-order lists: every page through the shared reads (list-repository.ts); a single read writes its JSON too. */
export const sqliteRecordLists = new RecordListReads(sqliteRecordCounts, sqlitePageQuery, async (db, orgId, id) => (await oneJsonQuery(db, { orgId, id })).rows[0]);
