import { intervalLoop } from '../background-loop.js';
import type { JobDefinition } from '../jobs/job-registry.js';
import { byDialect } from '../db/database.js';
import { defineFeature } from '../feature.js';
import { PostgresRecordWrites } from './writes-postgres.js';
import { sqliteRecordWrites } from './writes-sqlite.js';
import { resolveCompletionEvidence } from '../attachments/evidence.js';
import { RECORD_EVENTS } from './events.js';
import { postgresRecordLists } from './list-postgres.js';
import { sqliteRecordLists } from './list-sqlite.js';
import { foldRecordCountDeltas, postgresRecordCounts } from './record-counts-postgres.js';
import { sqliteRecordCounts } from './record-counts-sqlite.js';
import { checkRecordReferences } from './references.js';
import { announceOverdue } from './overdue.js';
import { recordRoutes } from './routes.js';
import { recordComponents } from './schemas.js';
import { recordExamples } from './examples.js';
import { RecordService } from './service.js';
import type { RecordLists } from './list-repository.js';
import type { RecordCounts } from './record-counts.js';
import type { RecordWrites } from './writes.js';
import { RecentRecords } from './recent-records.js';

declare module '../feature.js' {
  interface FeatureServices {
    records: RecordService;
    /** Work orders this process last wrote or read by id: other features' one-statement writes of a work order decide from them too. */
    recentRecords: RecentRecords;
  }
}
declare module '../keys/scopes.js' {
  interface ScopeCatalogue extends Record<keyof typeof RECORD_SCOPES, string> {}
}

const RECORD_SCOPES = {
  'records:read': 'Read work orders, their history and lists.',
  'records:write': 'Create and edit work orders and move them through their lifecycle.',
} as const;

/** How often work-order count deltas are folded (PostgreSQL): a list reads at most about this long's worth. */
const RECORD_COUNT_FOLD_INTERVAL_MS = 1_000;
/** How often overdue work orders are looked for: `record.overdue` comes within this of the `dueAt`. */
const OVERDUE_INTERVAL_MS = 30_000;

/** What the records feature does its own way on each database. */
interface RecordsOnDatabase {
  writes: RecordWrites;
  lists: RecordLists;
  counts: RecordCounts;
  jobs: JobDefinition[];
}

/** Work orders (`record` in paths and events): their lifecycle, history and lists. */
export const recordsFeature = defineFeature({
  name: 'records',
  tags: [{ name: 'Work orders', description: 'The work-order resource, `record` in paths and events.' }],
  scopes: RECORD_SCOPES,
  events: RECORD_EVENTS,
  schemas: recordComponents,
  examples: recordExamples,
  build({ database, clock, logger }) {
    const { db } = database;
    const recentRecords = new RecentRecords();
    // How a write commits, per database: one statement in a commit group on PostgreSQL, a transaction on SQLite's single writer.
    // Lists and counts per database too (list-*.ts, record-counts-*.ts).
    const storage = byDialect<RecordsOnDatabase>(database, {
      sqlite: () => ({ writes: sqliteRecordWrites, lists: sqliteRecordLists, counts: sqliteRecordCounts, jobs: [] }),
      postgres: (postgres) => ({
        writes: new PostgresRecordWrites(db, postgres.oneStatementWrites, recentRecords),
        lists: postgresRecordLists,
        counts: postgresRecordCounts,
        // Work-order counts are appended as deltas on PostgreSQL; folding them keeps the readers' sums short.
        jobs: [
          {
            placement: 'every-worker',
            periodMs: RECORD_COUNT_FOLD_INTERVAL_MS,
            does: 'folds appended work-order count deltas into the counters',
            loop: intervalLoop({ name: 'record-count-fold', intervalMs: RECORD_COUNT_FOLD_INTERVAL_MS, work: () => foldRecordCountDeltas(db), logger, errorMessage: 'folding work-order count deltas failed' }),
          },
        ],
      }),
    });
    const records = new RecordService(db, clock, checkRecordReferences, resolveCompletionEvidence, storage.writes, storage.lists, storage.counts);
    const jobs: JobDefinition[] = [
      ...storage.jobs,
      {
        placement: 'every-worker',
        periodMs: OVERDUE_INTERVAL_MS,
        does: 'announces open work orders past their dueAt (record.overdue), once per dueAt',
        loop: intervalLoop({ name: 'record-overdue', intervalMs: OVERDUE_INTERVAL_MS, work: () => announceOverdue(db, clock), logger, errorMessage: 'announcing overdue work orders failed' }),
      },
    ];
    return { services: { records, recentRecords }, api: recordRoutes(records), jobs };
  },
});
