import type { RecordWrites } from './writes.js';

/** SQLite: every write runs in RecordService's transaction, which group commit makes cheap (src/db/sqlite/group-commit.ts). */
export const sqliteRecordWrites: RecordWrites = {
  createAtOnce: async () => undefined,
  actAtOnce: () => undefined,
  noticeRead: () => {},
};
