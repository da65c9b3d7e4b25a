// Seeds cost lines fast, as the list part seeds work orders: straight into the database while the
// service is stopped. Each seeded line is a copy of one the API made (the template work order's
// labor, part and other line, read back from the database), with its own id, work order and time:
// every column the API writes is the API's. A part line also gets its ledger row (an `issue`
// movement) and takes its quantity off the stock, and each work order's `costs`, `labor_minutes`
// and version move as 50 API writes would have moved them. Left out: the 100k `record.cost_added`
// outbox events, which no page of cost lines or work orders reads.
import SqliteDatabase from 'better-sqlite3';
import { costsJson } from '../../src/costs/totals.js';
import { seededRecord, seededUlid } from './seed-records.js';

export const LINES_PER_RECORD = 50;

export type Row = Record<string, string | number | null>;

export interface CostLineSeedOptions {
  orgId: string;
  templateRecordId: string;
  /** How many lines: spread LINES_PER_RECORD to a work order over the newest seeded work orders. */
  count: number;
  /** The newest seeded work order's creation time (seedRecords' `newestAt`) and its serial (the work orders the organization held before): their ids follow. */
  recordsNewestAt: Date;
  recordsFirstSerial: number;
}

interface Totals {
  labor: bigint;
  parts: bigint;
  other: bigint;
  minutes: number;
  lines: number;
  lastAt: string;
}

/** The seeded lines, their ledger rows, and per work order what they add up to. */
export interface SeedPlan {
  batches: () => Generator<{ lines: Row[]; movements: Row[] }>;
  totals: Map<string, Totals>;
  /** Quantity (thousandths) taken off each (part, location) by the seeded part lines. */
  issued: Map<string, { partId: string; locationId: string; milli: bigint }>;
  currency: string;
}

const BATCH = 20_000;

/**
 * The lines to write, from the template's three (one of each kind, in id order: cst_, lab_, pln_)
 * and the ledger row of its part line; line i copies template i mod 3. Line i is 1 ms after line
 * i − 1, all after the newest seeded work order.
 */
export function planCostLines(templates: Row[], templateMovement: Row, options: CostLineSeedOptions): SeedPlan {
  if (templates.length !== 3) throw new Error(`the template work order holds ${templates.length} lines, expected 3 (labor, part, other)`);
  const firstMs = options.recordsNewestAt.getTime() + 60_000;
  const newest = options.recordsNewestAt.getTime();
  const totals = new Map<string, Totals>();
  const issued = new Map<string, { partId: string; locationId: string; milli: bigint }>();
  const line = (i: number): { line: Row; movement?: Row } => {
    const template = templates[i % templates.length]!;
    const at = new Date(firstMs + i).toISOString();
    const recordId = seededRecord(options.recordsFirstSerial + Math.floor(i / LINES_PER_RECORD), newest).id;
    const id = `${String(template.id).split('_')[0]}_${seededUlid(firstMs + i, i)}`;
    // The templates were posted (so that posted=false holds the seeded lines alone): a copy is a new, unposted line.
    const row: Row = { ...template, id, record_id: recordId, posted: 0, posted_at: null, erp_document_id: null, created_at: at, updated_at: at };
    const sum = totals.get(recordId) ?? { labor: 0n, parts: 0n, other: 0n, minutes: 0, lines: 0, lastAt: at };
    const amount = BigInt(template.amount_minor!);
    if (template.kind === 'labor') {
      sum.labor += amount;
      sum.minutes += Number(template.minutes);
    } else if (template.kind === 'part') sum.parts += amount;
    else sum.other += amount;
    sum.lines += 1;
    sum.lastAt = at;
    totals.set(recordId, sum);
    if (template.kind !== 'part') return { line: row };
    const movementId = `stm_${seededUlid(firstMs + i, i)}`;
    row.movement_id = movementId;
    const stockKey = `${template.part_id} ${template.location_id}`;
    const taken = issued.get(stockKey) ?? { partId: String(template.part_id), locationId: String(template.location_id), milli: 0n };
    taken.milli += BigInt(template.quantity_milli!);
    issued.set(stockKey, taken);
    return { line: row, movement: { ...templateMovement, id: movementId, record_id: recordId, cost_line_id: id, created_at: at } };
  };
  function* batches() {
    for (let from = 0; from < options.count; from += BATCH) {
      const lines: Row[] = [];
      const movements: Row[] = [];
      for (let i = from; i < Math.min(options.count, from + BATCH); i++) {
        const made = line(i);
        lines.push(made.line);
        if (made.movement) movements.push(made.movement);
      }
      yield { lines, movements };
    }
  }
  return { batches, totals, issued, currency: String(templates[0]!.currency) };
}

/** A work order's `costs` column after its seeded lines, as CostService writes it. */
export function seededCosts(totals: Totals, currency: string): string {
  return costsJson({ labor: totals.labor, parts: totals.parts, other: totals.other, minutes: totals.minutes, currency });
}

export interface CostLineSeedResult {
  inserted: number;
  records: number;
  seconds: number;
}

const insertSql = (table: string, row: Row) => `INSERT INTO ${table} (${Object.keys(row).join(', ')}) VALUES (${Object.keys(row).map((k) => `@${k}`).join(', ')})`;

/** Writes the lines into the SQLite file; the service must not be running on it. */
export function seedCostLines(sqlitePath: string, options: CostLineSeedOptions): CostLineSeedResult {
  const started = performance.now();
  const db = new SqliteDatabase(sqlitePath);
  try {
    db.pragma('journal_mode = WAL');
    // Throw-away benchmark data, as in seedRecords.
    db.pragma('synchronous = OFF');
    const templates = db.prepare('SELECT * FROM cost_lines WHERE record_id = ? ORDER BY id').all(options.templateRecordId) as Row[];
    const partLine = templates.find((t) => t.kind === 'part');
    const templateMovement = db.prepare('SELECT * FROM stock_movements WHERE id = ?').get(partLine?.movement_id ?? '') as Row | undefined;
    if (!templateMovement) throw new Error('the template part line has no ledger row');
    const plan = planCostLines(templates, templateMovement, options);
    const insertLine = db.prepare(insertSql('cost_lines', templates[0]!));
    const insertMovement = db.prepare(insertSql('stock_movements', templateMovement));
    db.transaction(() => {
      for (const { lines, movements } of plan.batches()) {
        for (const row of lines) insertLine.run(row);
        for (const row of movements) insertMovement.run(row);
      }
      const update = db.prepare('UPDATE records SET costs = ?, labor_minutes = labor_minutes + ?, version = version + ?, updated_at = ? WHERE id = ? AND org_id = ?');
      for (const [recordId, sum] of plan.totals) {
        if (update.run(seededCosts(sum, plan.currency), sum.minutes, sum.lines, sum.lastAt, recordId, options.orgId).changes !== 1) throw new Error(`no seeded work order ${recordId}`);
      }
      const take = db.prepare('UPDATE part_stock SET on_hand_milli = on_hand_milli - ? WHERE part_id = ? AND location_id = ? AND on_hand_milli >= ?');
      for (const { partId, locationId, milli } of plan.issued.values()) {
        if (take.run(Number(milli), partId, locationId, Number(milli)).changes !== 1) throw new Error(`not enough stock of ${partId} for the seeded lines`);
      }
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
    return { inserted: options.count, records: plan.totals.size, seconds: (performance.now() - started) / 1000 };
  } finally {
    db.close();
  }
}
