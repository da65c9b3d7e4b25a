/**
 * Every table of the database, by name. Empty here: each feature declares its tables' row types
 * in its own `tables.ts` and adds them with `declare module '../db/tables.js' { interface Tables { … } }`.
 *
 * Row types of every table, shared by both dialects. Timestamps are ISO 8601 UTC strings with
 * milliseconds (they sort as text and read the same on SQLite and PostgreSQL); JSON columns hold
 * serialized text so both dialects store the exact bytes we wrote.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled in by each feature's tables.ts
export interface Tables {}
