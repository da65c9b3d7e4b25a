// Posts the cost lines of work orders (labor, parts used, invoices) into a local SQLite journal
// standing in for an ERP, with @work-order-api/client, each line exactly once. Kill it at any moment
// and run it again: a line is booked in the journal under its id before the API is told, so it is
// never booked twice, and telling the API again with the same document is harmless.
//
//   WO_URL=http://127.0.0.1:8080 WO_KEY=wo_… ERP_DB=./erp-costs.db node --import tsx examples/erp-costs/erp-costs.ts
//
// The key needs the costs:read and costs:write scopes.
import Database from 'better-sqlite3';
import { createClient, ProblemError, type Schemas } from '@work-order-api/client';

type CostLine = Schemas['CostLine'];

export function openJournal(path: string): Database.Database {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec(`
    -- The ERP's journal: one entry per cost line, keyed by the line's stable id.
    CREATE TABLE IF NOT EXISTS journal_entries (
      number INTEGER PRIMARY KEY AUTOINCREMENT, -- the ERP's document number, JE-000001
      cost_line_id TEXT NOT NULL UNIQUE,
      record_id TEXT NOT NULL,
      kind TEXT NOT NULL,
      description TEXT NOT NULL,
      amount TEXT NOT NULL,                     -- the exact decimal string the API answers: never a float
      currency TEXT NOT NULL,
      reverses_id TEXT,                         -- a correction: the line whose amount it negates
      booked_at TEXT NOT NULL,
      confirmed_at TEXT,                        -- when the API took the document (POST /cost-lines/{id}/post)
      taken_by TEXT                             -- another system's document, when it posted the line first
    );
  `);
  return db;
}

/** The ERP's document for a journal entry. */
export const documentOf = (number: number) => `JE-${String(number).padStart(6, '0')}`;

export interface PostOptions {
  baseUrl: string;
  apiKey: string;
  databasePath: string;
  /** Lines per page of `GET /cost-lines?posted=false`. */
  pageSize?: number;
  log?: (line: string) => void;
}

/** One pass: books and posts every unposted line, then answers how many it posted. */
export async function postCostLines(options: PostOptions): Promise<number> {
  const log = options.log ?? console.log;
  const db = openJournal(options.databasePath);
  const book = db.prepare(`INSERT INTO journal_entries (cost_line_id, record_id, kind, description, amount, currency, reverses_id, booked_at)
    VALUES (@id, @recordId, @kind, @description, @amount, @currency, @reversesId, @bookedAt) ON CONFLICT (cost_line_id) DO NOTHING`);
  const numberOf = db.prepare<[string], { number: number }>('SELECT number FROM journal_entries WHERE cost_line_id = ?');
  const confirm = db.prepare('UPDATE journal_entries SET confirmed_at = ? WHERE cost_line_id = ?');
  const takenBy = db.prepare('UPDATE journal_entries SET taken_by = ? WHERE cost_line_id = ?');
  const unconfirmed = db.prepare<[], { cost_line_id: string; number: number }>('SELECT cost_line_id, number FROM journal_entries WHERE confirmed_at IS NULL AND taken_by IS NULL ORDER BY number');
  const client = createClient({ baseUrl: options.baseUrl, apiKey: options.apiKey });
  let posted = 0;

  /** Tells the API the line is in document `number`; the same document again is answered as posted. */
  const acknowledge = async (costLineId: string, number: number, what: string) => {
    try {
      await client.postCostLine({ path: { id: costLineId }, body: { erpDocumentId: documentOf(number) } });
      confirm.run(new Date().toISOString(), costLineId);
      posted++;
      log(`posted ${costLineId} as ${documentOf(number)}${what}`);
    } catch (error) {
      if (!(error instanceof ProblemError && error.code === 'cost_line_posted')) throw error;
      // Posted by another system as another document: ours is a duplicate to cancel in the ERP.
      const theirs = String(error.problem.erpDocumentId);
      takenBy.run(theirs, costLineId);
      log(`${costLineId} was posted as ${theirs} elsewhere; ${documentOf(number)} is a duplicate to cancel`);
    }
  };

  try {
    // Entries a stopped run booked without the API hearing of them: told now, with the same document.
    for (const entry of unconfirmed.all()) await acknowledge(entry.cost_line_id, entry.number, ' (booked by an earlier run)');
    for (;;) {
      // A posted line leaves the list, so every page is read from the start.
      const page = await client.listCostLines({ query: { posted: false, limit: options.pageSize ?? 100 } });
      if (page.costLines.length === 0) break;
      for (const line of page.costLines) {
        book.run(entryOf(line));
        const { number } = numberOf.get(line.id)!;
        await acknowledge(line.id, number, `: ${line.kind} ${line.amount.amount} ${line.amount.currency}`);
      }
    }
    log(`nothing left to post; ${posted} line${posted === 1 ? '' : 's'} posted in this run`);
    return posted;
  } finally {
    db.close();
  }
}

function entryOf(line: CostLine) {
  return {
    id: line.id,
    recordId: line.recordId,
    kind: line.kind,
    description: line.description,
    amount: line.amount.amount,
    currency: line.amount.currency,
    reversesId: line.reversesId,
    bookedAt: new Date().toISOString(),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { WO_URL, WO_KEY, ERP_DB, ERP_PAGE_SIZE } = process.env;
  if (!WO_URL || !WO_KEY) throw new Error('set WO_URL and WO_KEY (a key with the costs:read and costs:write scopes)');
  await postCostLines({ baseUrl: WO_URL, apiKey: WO_KEY, databasePath: ERP_DB ?? './erp-costs.db', ...(ERP_PAGE_SIZE ? { pageSize: Number(ERP_PAGE_SIZE) } : {}) });
}
