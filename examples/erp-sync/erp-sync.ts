// Mirrors work orders into a local SQLite table (an "ERP") from the event feed, with
// @work-order-api/client. Kill it at any moment and start it again: nothing is lost or applied twice,
// because each event's change, its id and the feed cursor are written in one transaction.
//
//   WO_URL=http://127.0.0.1:8080 WO_KEY=wo_… ERP_DB=./erp.db node --import tsx examples/erp-sync/erp-sync.ts
//
// The key needs the events:read scope.
import Database from 'better-sqlite3';
import { createClient, type FeedEvent } from '@work-order-api/client';

/** How long without a new event before the sync says it is waiting. */
const IDLE_NOTICE_MS = 1_000;

const RECORD_EVENTS = ['record.created', 'record.updated', 'record.assigned', 'record.status_changed', 'record.completed', 'record.closed'] as const;

export function openMirror(path: string): Database.Database {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec(`
    CREATE TABLE IF NOT EXISTS work_orders (
      id TEXT PRIMARY KEY,
      status TEXT NOT NULL,
      assignee TEXT,
      address TEXT NOT NULL,
      description TEXT NOT NULL,
      version INTEGER,
      updated_at TEXT
    );
    -- Every event applied, so that one seen twice is applied once.
    CREATE TABLE IF NOT EXISTS applied_events (id TEXT PRIMARY KEY, sequence INTEGER NOT NULL, type TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS feed_cursor (one INTEGER PRIMARY KEY CHECK (one = 1), after INTEGER NOT NULL);
  `);
  return db;
}

type RecordSnapshot = { id: string; status: string; assignee: string | null; address: string; description: string; version: number; updatedAt: string };

export async function runSync(options: { baseUrl: string; apiKey: string; databasePath: string; signal?: AbortSignal }): Promise<void> {
  const db = openMirror(options.databasePath);
  const upsert = db.prepare(`INSERT INTO work_orders (id, status, assignee, address, description, version, updated_at)
    VALUES (@id, @status, @assignee, @address, @description, @version, @updatedAt)
    ON CONFLICT (id) DO UPDATE SET status = excluded.status, assignee = excluded.assignee, address = excluded.address,
      description = excluded.description, version = excluded.version, updated_at = excluded.updated_at`);
  const setStatus = db.prepare('UPDATE work_orders SET status = ? WHERE id = ?');
  const remember = db.prepare('INSERT OR IGNORE INTO applied_events (id, sequence, type) VALUES (?, ?, ?)');
  const saveCursor = db.prepare('INSERT INTO feed_cursor (one, after) VALUES (1, ?) ON CONFLICT (one) DO UPDATE SET after = excluded.after');
  const cursor = db.prepare('SELECT after FROM feed_cursor').get() as { after: number } | undefined;

  const apply = db.transaction((event: FeedEvent) => {
    if (remember.run(event.id, event.sequence, event.type).changes === 1) {
      const payload = event.payload as { recordId: string; record?: RecordSnapshot; to?: string };
      // Events come in feed order, so the latest one written is the latest state.
      if (payload.record) upsert.run({ ...payload.record, assignee: payload.record.assignee ?? null });
      else if (event.type === 'record.status_changed' && payload.to) setStatus.run(payload.to, payload.recordId);
    }
    saveCursor.run(event.sequence);
  });

  const client = createClient({ baseUrl: options.baseUrl, apiKey: options.apiKey });
  let after = cursor?.after ?? 0;
  console.log(`following the event feed of ${options.baseUrl} ${cursor ? `after sequence ${after}` : 'from its oldest event'}`);
  // The follower long-polls once it has caught up; a second without an event means it is doing so.
  let idle: NodeJS.Timeout | undefined;
  const sayWaitingSoon = () => {
    clearTimeout(idle);
    idle = setTimeout(() => console.log(`up to date (sequence ${after}); waiting for new events…`), IDLE_NOTICE_MS);
  };
  sayWaitingSoon();
  try {
    for await (const event of client.events.follow({ types: [...RECORD_EVENTS], ...(cursor ? { after: cursor.after } : {}), ...(options.signal ? { signal: options.signal } : {}) })) {
      apply(event);
      after = event.sequence;
      console.log(`applied ${event.sequence} ${event.type} ${event.id}`);
      sayWaitingSoon();
    }
  } finally {
    clearTimeout(idle);
    db.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { WO_URL, WO_KEY, ERP_DB } = process.env;
  if (!WO_URL || !WO_KEY) throw new Error('set WO_URL and WO_KEY (a key with the events:read scope)');
  const stop = new AbortController();
  process.once('SIGTERM', () => stop.abort());
  process.once('SIGINT', () => stop.abort());
  await runSync({ baseUrl: WO_URL, apiKey: WO_KEY, databasePath: ERP_DB ?? './erp.db', signal: stop.signal });
}
