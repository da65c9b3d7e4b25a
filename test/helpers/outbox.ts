import { byDialect, type Database } from '../../src/db/database.js';
import type { OutboxProgress } from '../../src/events/outbox-progress.js';
import { postgresOutboxProgress } from '../../src/events/outbox-progress-postgres.js';
import { sqliteOutboxProgress } from '../../src/events/outbox-progress-sqlite.js';

/** How `database` keeps track of dispatched events, as the events and webhooks features pick it. */
export function outboxProgressOf(database: Database): OutboxProgress {
  return byDialect(database, { sqlite: () => sqliteOutboxProgress, postgres: () => postgresOutboxProgress });
}
