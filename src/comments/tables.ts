/** Row types of this feature's tables (timestamps ISO 8601 UTC text, JSON columns serialized text; see src/db/tables.ts). */
/** A comment on a work order; the author is the API key that wrote it, its name as it was then (migration 0015). */
export interface RecordCommentsTable {
  id: string;
  org_id: string;
  record_id: string;
  body: string;
  author_key_id: string;
  author_name: string;
  created_at: string;
}

declare module '../db/tables.js' {
  interface Tables {
    record_comments: RecordCommentsTable;
  }
}
