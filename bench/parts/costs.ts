// What time, parts and costs cost (issue 50, docs/benchmarks.md "Costs"): each target compares two
// paths measured in the same run, in alternating rounds (A B, B A, A B) because this machine's speed
// drifts, by server CPU per request (on PostgreSQL, the API's plus PostgreSQL's):
// - issuing a part against creating a work order;
// - paging GET /cost-lines?posted=false through 100k seeded lines against paging GET /records
//   through 100k work orders, the same walk of offsets at the same page size;
// - GET /records/{id} of a work order with 50 cost lines against one with none.
import path from 'node:path';
import type { RequestSpec } from 'autocannon';
import { AB_ROUNDS, comparePaths as compareAb, ratioTarget, walk as walkAb } from '../lib/ab-rounds.js';
import { Baseline, measurementSeconds, type LoadFigures } from '../lib/load.js';
import { removeDataDir, serverRunner, startService, temporaryDataDir, type ApiTarget } from '../lib/processes.js';
import { loadMeasurement, type Measurement, type PartResult } from '../lib/results.js';
import { callApi, type Tenant } from '../lib/tenant.js';
import { createCostsTenant, setUpCosts, type CostsFixture } from '../lib/costs-setup.js';
import { seedCostLines, type CostLineSeedOptions } from '../lib/seed-cost-lines.js';
import { seedRecords } from '../lib/seed-records.js';
import { describeQueryTimes, sqliteCostLineQueryTimes } from '../lib/cost-line-queries.js';
import { createRequests } from './create.js';

export const CONNECTIONS = 10;
const PAGE = 50;
/** Seeded work orders and seeded (unposted) cost lines: the two lists paged through. */
export const SEEDED_RECORDS = 100_000;
export const SEEDED_LINES = 100_000;

const ISSUE_CPU_RATIO = 1.5;
const PAGE_CPU_RATIO = 1.5;
const TOTALS_CPU_RATIO = 1.2;

/** Where a costs run measures: the service's API processes, and how one load becomes a measurement there. */
export interface CostsRun {
  api: ApiTarget;
  tenant: Tenant;
  fixture: CostsFixture;
  /** Figures of one load, with PostgreSQL's CPU when it runs there. */
  measure: (name: string, load: () => Promise<LoadFigures>) => Promise<Measurement>;
  /** A note on where a cost-line page's time goes in this database (bench/lib/cost-line-queries.ts). */
  queryTimes: () => Promise<string>;
}

/** The seeding options both databases use, with the newest seeded work order an hour old. */
export function seedPlan(tenant: Tenant, fixture: CostsFixture): { newestAt: Date; lines: (firstSerial: number) => CostLineSeedOptions } {
  const newestAt = new Date(Date.now() - 3_600_000);
  return { newestAt, lines: (recordsFirstSerial) => ({ orgId: tenant.orgId, templateRecordId: fixture.templateRecordId, count: SEEDED_LINES, recordsNewestAt: newestAt, recordsFirstSerial }) };
}

const comparePaths = (run: CostsRun, a: Parameters<typeof compareAb>[1], b: Parameters<typeof compareAb>[2]) => compareAb(run, a, b, CONNECTIONS);
const walk = (tenant: Tenant, rows: number, pathOf: (offset: number) => string) => walkAb(tenant, rows, PAGE, pathOf);

/** POST /records/{id}/parts: one unit with a fresh Idempotency-Key, spread over the fixture's work orders and parts. */
export function issueRequests(tenant: Tenant, fixture: CostsFixture): RequestSpec[] {
  const run = `${process.pid}-${Date.now()}`;
  let n = 0;
  return [
    {
      method: 'POST',
      setupRequest: (request) => {
        const i = n++;
        const recordId = fixture.issueRecordIds[i % fixture.issueRecordIds.length]!;
        const body = JSON.stringify({ partId: fixture.partIds[i % fixture.partIds.length], locationId: fixture.locationId, quantity: '1' });
        return { ...request, path: `/api/v1/records/${recordId}/parts`, body, headers: { ...tenant.headers, 'idempotency-key': `issue-${run}-${i}` } };
      },
    },
  ];
}

async function read<T>(run: CostsRun, url: string): Promise<T> {
  const answer = await callApi<T>(run.api.baseUrl, run.tenant, 'GET', url);
  if (answer.status !== 200) throw new Error(`GET ${url} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

interface LineJson {
  id: string;
  recordId: string;
  kind: string;
  amount: { amount: string };
  [field: string]: unknown;
}
const cents = (amount: string) => BigInt(amount.replace('.', ''));

/** A work order's `costs.total` is the sum of its lines (a seeded one as much as one made through the API). */
async function checkTotals(run: CostsRun, recordId: string): Promise<string> {
  const record = await read<{ costs: { total: { amount: string } } | null }>(run, `/api/v1/records/${recordId}`);
  const { costLines } = await read<{ costLines: LineJson[] }>(run, `/api/v1/cost-lines?recordId=${recordId}&limit=100`);
  const sum = costLines.reduce((total, line) => total + cents(line.amount.amount), 0n);
  if (costLines.length !== 50 || record.costs === null || cents(record.costs.total.amount) !== sum) {
    throw new Error(`work order ${recordId}: ${costLines.length} lines summing to ${sum} cents, costs ${JSON.stringify(record.costs)}`);
  }
  return record.costs.total.amount;
}

/**
 * Before measuring: posted=false holds exactly the seeded lines, a seeded line reads as the template
 * it was copied from but for its own id, work order, times and posting, and totals are the lines' sums.
 */
async function checkSeed(run: CostsRun): Promise<string> {
  const unposted = await read<{ total: number; costLines: LineJson[] }>(run, '/api/v1/cost-lines?posted=false&limit=3');
  if (unposted.total !== SEEDED_LINES) throw new Error(`posted=false holds ${unposted.total} lines, expected ${SEEDED_LINES}`);
  const templates = (await read<{ costLines: LineJson[] }>(run, `/api/v1/cost-lines?recordId=${run.fixture.templateRecordId}`)).costLines;
  const own = ['id', 'recordId', 'posted', 'postedAt', 'erpDocumentId', 'createdAt', 'updatedAt'];
  const strip = (line: LineJson) => JSON.stringify(Object.fromEntries(Object.entries(line).filter(([k]) => !own.includes(k))));
  for (const seeded of unposted.costLines) {
    const template = templates.find((t) => t.kind === seeded.kind);
    if (!template || strip(template) !== strip(seeded)) throw new Error(`seeded line ${JSON.stringify(seeded)} differs from the API's ${JSON.stringify(template)}`);
  }
  const seededTotal = await checkTotals(run, unposted.costLines[0]!.recordId);
  const apiTotal = await checkTotals(run, run.fixture.fiftyLinesRecordId);
  return `posted=false holds the ${SEEDED_LINES.toLocaleString('en')} seeded lines; a seeded work order's costs.total (${seededTotal} EUR) and the API-made one's (${apiTotal} EUR) are the sums of their 50 lines`;
}

/** The three comparisons, in an order that leaves the lists as seeded while they are paged: the issue load adds lines and work orders. */
export async function measureCosts(run: CostsRun, label: string): Promise<Pick<PartResult, 'measurements' | 'targets' | 'notes'>> {
  const { tenant, fixture } = run;
  const notes = [await checkSeed(run)];
  const suffix = label ? `, ${label}` : '';
  const totals = await comparePaths(
    run,
    { name: `GET /records/{id}, 50 cost lines${suffix}`, requests: () => [{ method: 'GET', path: `/api/v1/records/${fixture.fiftyLinesRecordId}`, headers: tenant.readHeaders }] },
    { name: `GET /records/{id}, no cost line${suffix}`, requests: () => [{ method: 'GET', path: `/api/v1/records/${fixture.noLinesRecordId}`, headers: tenant.readHeaders }] },
  );
  const paged = await comparePaths(
    run,
    { name: `GET /cost-lines?posted=false, limit ${PAGE}, offsets 0 → ${SEEDED_LINES - PAGE} in turn${suffix}`, requests: walk(tenant, SEEDED_LINES, (o) => `/api/v1/cost-lines?posted=false&limit=${PAGE}&offset=${o}`) },
    { name: `GET /records, limit ${PAGE}, offsets 0 → ${SEEDED_RECORDS - PAGE} in turn${suffix}`, requests: walk(tenant, SEEDED_RECORDS, (o) => `/api/v1/records?limit=${PAGE}&offset=${o}`) },
  );
  notes.push(await run.queryTimes());
  const issues = await comparePaths(
    run,
    { name: `POST /records/{id}/parts (issue 1 unit)${suffix}`, requests: () => issueRequests(tenant, fixture) },
    { name: `POST /records (create)${suffix}`, requests: () => createRequests(tenant, fixture.categoryId) },
  );
  const scope = label ? ` (${label})` : '';
  return {
    measurements: [...totals.a, ...totals.b, ...paged.a, ...paged.b, ...issues.a, ...issues.b],
    targets: [
      ratioTarget(`parts issue vs work-order create${scope}`, ISSUE_CPU_RATIO, issues.a, issues.b, ['issue', 'create']),
      ratioTarget(`GET /cost-lines?posted=false page through 100k lines vs GET /records page through 100k work orders${scope}`, PAGE_CPU_RATIO, paged.a, paged.b, ['cost lines', 'work orders']),
      ratioTarget(`GET /records/{id} with 50 cost lines vs none${scope}`, TOTALS_CPU_RATIO, totals.a, totals.b, ['50 lines', 'none']),
    ],
    notes: [
      ...notes,
      `${AB_ROUNDS} alternating rounds per comparison at ${CONNECTIONS} connections; a target is the median of the rounds' ratios of CPU per request; the pooled CPU per request (weighted by requests) is shown beside it.`,
      `The issue load spreads over ${fixture.issueRecordIds.length} work orders and ${fixture.partIds.length} parts in one storeroom; both writes send an Idempotency-Key.`,
    ],
  };
}

/** The costs part on the embedded SQLite database. */
export async function runCostsPart(): Promise<PartResult> {
  const baseline = new Baseline();
  const base = await baseline.at(CONNECTIONS);
  const dataDir = temporaryDataDir();
  const sqlitePath = path.join(dataDir, 'wo.sqlite');
  try {
    const tenant = await createCostsTenant(dataDir);
    let service = await startService({ dataDir });
    let fixture: CostsFixture;
    try {
      fixture = await setUpCosts(service.baseUrl, tenant);
    } finally {
      await service.stop();
    }
    const plan = seedPlan(tenant, fixture);
    const records = seedRecords(sqlitePath, { orgId: tenant.orgId, categoryId: fixture.categoryId, count: SEEDED_RECORDS, newestAt: plan.newestAt });
    const lines = seedCostLines(sqlitePath, plan.lines(records.totalInOrg - records.inserted));
    service = await startService({ dataDir });
    try {
      const api = { baseUrl: service.baseUrl, cpuSeconds: () => service.cpuSeconds() };
      const result = await measureCosts(
        {
          api,
          tenant,
          fixture,
          measure: async (name, load) => loadMeasurement(name, await load(), base),
          queryTimes: async () => describeQueryTimes(await sqliteCostLineQueryTimes(sqlitePath, tenant.orgId, SEEDED_LINES), 'SQLite, better-sqlite3 in the harness'),
        },
        '',
      );
      return {
        part: 'costs',
        date: new Date().toISOString(),
        server: serverRunner(),
        measurementSeconds: measurementSeconds(),
        measurements: result.measurements,
        memory: [{ process: 'service', peakRssMb: service.peakRssMb() }],
        targets: result.targets,
        notes: [
          `seeded ${records.inserted} work orders in ${records.seconds.toFixed(1)} s and ${lines.inserted} cost lines on ${lines.records} of them in ${lines.seconds.toFixed(1)} s`,
          ...result.notes,
        ],
        baseline: baseline.all(),
      };
    } finally {
      await service.stop();
    }
  } finally {
    removeDataDir(dataDir);
  }
}
