import pg from 'pg';
import { planCostLines, seededCosts, type CostLineSeedOptions, type CostLineSeedResult, type Row } from '../lib/seed-cost-lines.js';

/** Columns of these types travel as arrays of that type; every other column is text. */
const COLUMN_TYPES: Record<string, string> = {
  amount_minor: 'bigint',
  rate_minor: 'bigint',
  quantity_milli: 'bigint',
  unit_cost_minor: 'bigint',
  posted: 'integer',
  minutes: 'integer',
};

/** One INSERT … SELECT FROM unnest(arrays) of `rows`, every column of the first row one array. */
async function insertRows(client: pg.Client, table: string, rows: Row[]): Promise<void> {
  if (!rows.length) return;
  const columns = Object.keys(rows[0]!);
  const arrays = columns.map((column) => rows.map((row) => row[column] ?? null));
  const casts = columns.map((column, i) => `$${i + 1}::${COLUMN_TYPES[column] ?? 'text'}[]`).join(', ');
  await client.query(`INSERT INTO ${table} (${columns.join(', ')}) SELECT * FROM unnest(${casts})`, arrays);
}

/**
 * The SQLite seeder's lines (planCostLines: copies of the API's own, their ledger rows, the work
 * orders' totals and the stock taken) written into PostgreSQL with one statement per batch, in one
 * transaction, then VACUUM ANALYZE as the work-order seeder does.
 */
export async function seedCostLinesOnPostgres(databaseUrl: string, options: CostLineSeedOptions): Promise<CostLineSeedResult> {
  const started = performance.now();
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('SET synchronous_commit = off');
    const templates = (await client.query<Row>('SELECT * FROM cost_lines WHERE record_id = $1 ORDER BY id', [options.templateRecordId])).rows;
    const partLine = templates.find((t) => t.kind === 'part');
    const templateMovement = (await client.query<Row>('SELECT * FROM stock_movements WHERE id = $1', [partLine?.movement_id ?? ''])).rows[0];
    if (!templateMovement) throw new Error('the template part line has no ledger row');
    const plan = planCostLines(templates, templateMovement, options);
    await client.query('BEGIN');
    for (const { lines, movements } of plan.batches()) {
      await insertRows(client, 'cost_lines', lines);
      await insertRows(client, 'stock_movements', movements);
    }
    const sums = [...plan.totals];
    const updated = await client.query(
      `UPDATE records r SET costs = s.costs, labor_minutes = r.labor_minutes + s.minutes, version = r.version + s.lines, updated_at = s.last_at
         FROM unnest($1::text[], $2::text[], $3::integer[], $4::integer[], $5::text[]) AS s(id, costs, minutes, lines, last_at)
        WHERE r.id = s.id AND r.org_id = $6`,
      [sums.map(([id]) => id), sums.map(([, sum]) => seededCosts(sum, plan.currency)), sums.map(([, sum]) => sum.minutes), sums.map(([, sum]) => sum.lines), sums.map(([, sum]) => sum.lastAt), options.orgId],
    );
    if (updated.rowCount !== sums.length) throw new Error(`updated the totals of ${updated.rowCount} work orders, expected ${sums.length}`);
    for (const { partId, locationId, milli } of plan.issued.values()) {
      const taken = await client.query('UPDATE part_stock SET on_hand_milli = on_hand_milli - $1 WHERE part_id = $2 AND location_id = $3 AND on_hand_milli >= $1', [String(milli), partId, locationId]);
      if (taken.rowCount !== 1) throw new Error(`not enough stock of ${partId} for the seeded lines`);
    }
    // The lines' count deltas (migration 0029) folded into the counters, as the fold job would before anyone reads them.
    await client.query(`
      WITH folded AS (DELETE FROM cost_line_count_deltas RETURNING org_id, posted, lines_delta, moves_delta),
      sums AS (SELECT org_id, posted, sum(lines_delta) AS lines, sum(moves_delta) AS moves FROM folded GROUP BY org_id, posted)
      INSERT INTO cost_line_counters (org_id, posted, lines, moves) SELECT org_id, posted, lines, moves FROM sums
      ON CONFLICT (org_id, posted) DO UPDATE SET lines = cost_line_counters.lines + excluded.lines, moves = cost_line_counters.moves + excluded.moves`);
    // Committed to disk before VACUUM: VACUUM marks a page all-visible only once its rows' commit is flushed, and without
    // that a deep page is no index-only scan (bench/analysis.md, session 35).
    await client.query('SET synchronous_commit = on');
    await client.query('COMMIT');
    // Without the visibility map and statistics, a deep page is no index-only scan and the planner guesses (see seedRecordsOnPostgres).
    for (const table of ['cost_lines', 'stock_movements', 'records', 'part_stock', 'cost_line_counters', 'cost_line_count_deltas']) await client.query(`VACUUM (ANALYZE) ${table}`);
    return { inserted: options.count, records: plan.totals.size, seconds: (performance.now() - started) / 1000 };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    await client.end();
  }
}
