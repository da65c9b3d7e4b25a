// Where a page of GET /cost-lines?posted=false spends its time in the database: the two statements
// listCostLines runs (src/costs/repository.ts), timed alone from the harness on the seeded database,
// the page at a shallow and a deep offset and the exact count beside it.
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';

const RUNS = 15;
const PAGE_SQL = 'SELECT * FROM cost_lines WHERE org_id = $org AND posted = 0 ORDER BY updated_at ASC, id ASC LIMIT 50 OFFSET $offset';
const COUNT_SQL = 'SELECT count(*) AS n FROM cost_lines WHERE org_id = $org AND posted = 0';

export interface CostLineQueryTimes {
  countUs: number;
  pageAt0Us: number;
  pageAtHalfUs: number;
  half: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.floor(sorted.length / 2)]!);
}

async function timed(run: () => unknown): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    await run();
    samples.push((performance.now() - started) * 1000);
  }
  return median(samples);
}

/** On the SQLite file (read-only, beside the running service: WAL lets both read). */
export async function sqliteCostLineQueryTimes(sqlitePath: string, orgId: string, lines: number): Promise<CostLineQueryTimes> {
  const db = new SqliteDatabase(sqlitePath, { readonly: true });
  try {
    const page = db.prepare(PAGE_SQL.replace('$org', '@org').replace('$offset', '@offset'));
    const count = db.prepare(COUNT_SQL.replace('$org', '@org'));
    const half = Math.floor(lines / 2);
    return {
      countUs: await timed(() => count.get({ org: orgId })),
      pageAt0Us: await timed(() => page.all({ org: orgId, offset: 0 })),
      pageAtHalfUs: await timed(() => page.all({ org: orgId, offset: half })),
      half,
    };
  } finally {
    db.close();
  }
}

/** On PostgreSQL: the server's own execution time (EXPLAIN ANALYZE), without the round trip. */
export async function postgresCostLineQueryTimes(databaseUrl: string, orgId: string, lines: number): Promise<CostLineQueryTimes> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const executionUs = async (statement: string, params: unknown[]) => {
      const samples: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const plan = await client.query<{ 'QUERY PLAN': [{ 'Execution Time': number }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement}`, params);
        samples.push(plan.rows[0]!['QUERY PLAN'][0]['Execution Time'] * 1000);
      }
      return median(samples);
    };
    const page = PAGE_SQL.replace('$org', '$1').replace('$offset', '$2');
    const half = Math.floor(lines / 2);
    return {
      countUs: await executionUs(COUNT_SQL.replace('$org', '$1'), [orgId]),
      pageAt0Us: await executionUs(page, [orgId, 0]),
      pageAtHalfUs: await executionUs(page, [orgId, half]),
      half,
    };
  } finally {
    await client.end();
  }
}

export function describeQueryTimes(times: CostLineQueryTimes, where: string): string {
  return (
    `where a cost-line page's time goes (${where}, each statement alone, median of ${RUNS}): the exact count of posted=false ${times.countUs} µs, ` +
    `the page at offset 0 ${times.pageAt0Us} µs, at offset ${times.half.toLocaleString('en')} ${times.pageAtHalfUs} µs; GET /records takes its total from record_counters and its deep pages from list checkpoints`
  );
}
