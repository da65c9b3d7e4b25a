import path from 'node:path';
import { Baseline, measurementSeconds, runLoad } from '../lib/load.js';
import { removeDataDir, serverRunner, startService, temporaryDataDir, waitFor } from '../lib/processes.js';
import { bracketedMeasurement, check, isClean, loadMeasurement, type Measurement, type PartResult, type TargetCheck } from '../lib/results.js';
import { benchPersonId, seedCategory, seedDirectory, seededForPerson, seedRecords } from '../lib/seed-records.js';
import { BENCH_SCOPES, callApi, createCategory, createTenant, recordBody, type Tenant } from '../lib/tenant.js';
import { compareReads, diffAnswers, fixedRead, rotatingRead, sameAnswer, startReadsReference, type ReadComparison, type ReadSide, type ReadUnderTest } from '../lib/read-references.js';

const CONNECTIONS = 10;

/** The person whose list `assigneeId=` is measured (their own work orders and their team's). */
export const MEASURED_PERSON = 42;

/** `GET /records?assigneeId=` at 100k may cost at most this many times the CPU per request of `status=OPEN`, in the same run. */
export const ASSIGNEE_FILTER_CPU_RATIO = 1.5;

/** Rounds of the assigneeId / status=OPEN comparison: the two are measured alternately (the machine's speed drifts within minutes). */
export const ASSIGNEE_FILTER_ROUNDS = 3;

/**
 * The first pages by assigneeId and by status=OPEN, measured alternately for ASSIGNEE_FILTER_ROUNDS
 * rounds; the target compares their median CPU per request (the API's plus, on PostgreSQL, the database's).
 */
export async function measureAssigneeAgainstStatus(
  label: string,
  measure: { assignee: (round: number) => Promise<Measurement>; status: (round: number) => Promise<Measurement> },
): Promise<{ measurements: Measurement[]; target: TargetCheck }> {
  const assignee: Measurement[] = [];
  const status: Measurement[] = [];
  for (let round = 1; round <= ASSIGNEE_FILTER_ROUNDS; round++) {
    status.push(await measure.status(round));
    assignee.push(await measure.assignee(round));
  }
  const cpu = (m: Measurement) => (m.cpuUsPerReq ?? NaN) + (m.postgresCpuUsPerReq ?? 0);
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const assigneeCpu = median(assignee.map(cpu));
  const statusCpu = median(status.map(cpu));
  const ratio = assigneeCpu / statusCpu;
  const clean = [...assignee, ...status].every(isClean) && Number.isFinite(ratio);
  const target = check(
    `${label}: assigneeId ≤ ${ASSIGNEE_FILTER_CPU_RATIO} × the CPU per request of status=OPEN`,
    `${ratio.toFixed(2)} × (median of ${ASSIGNEE_FILTER_ROUNDS} alternating rounds: ${Math.round(assigneeCpu)} µs against ${Math.round(statusCpu)} µs)`,
    clean ? ratio <= ASSIGNEE_FILTER_CPU_RATIO : null,
  );
  return { measurements: status.flatMap((m, i) => [m, assignee[i]!]), target };
}

/** The organization size at which each read is measured beside the reference reads server (issue 51). */
export const READS_REFERENCE_SIZE = 100_000;

/**
 * Issue 51: the reads of a `size` organization beside bench/reference-reads-server.ts on the same
 * database (the whole list at offsets 0 and 50 %, status=OPEN at 0, one work order by id), after
 * checking that the reference answers the same bytes.
 */
export async function compareWithReference(
  label: string,
  total: number,
  openTotal: number,
  service: ReadSide,
  reference: ReadSide,
  measure: ReadComparison['measure'],
  feed: SeededFeed,
  proofs: SeededProofs,
): Promise<{ measurements: Measurement[]; targets: TargetCheck[]; notes: string[] }> {
  const page = await callApiAs<{ records: { id: string }[] }>(service, `/api/v1/records?limit=100&offset=${Math.floor(total / 3)}`);
  const idPaths = page.records.map((record) => `/api/v1/records/${record.id}`);
  const half = Math.floor(total / 2);
  const reads: ReadUnderTest[] = [
    fixedRead(`GET /records list ${label} offset 0`, '/api/v1/records?limit=50&offset=0'),
    fixedRead(`GET /records list ${label} offset ${half} (50%)`, `/api/v1/records?limit=50&offset=${half}`),
    fixedRead(`GET /records list ${label} status=OPEN offset 0`, '/api/v1/records?limit=50&status=OPEN&offset=0'),
    rotatingRead(`GET /records/{id} (${idPaths.length} ids in turn)`, idPaths),
  ];
  const feedReads: ReadUnderTest[] = [
    fixedRead(`GET /events?after=0 (a feed of ${feed.sequences.length} events)`, '/api/v1/events?after=0&limit=50'),
    rotatingRead(`GET /events?after= (${feed.followed.length} positions near the end, in turn)`, feed.followed),
  ];
  const notes: string[] = [`the reads reference (bench/reference-reads-server.ts) was checked to answer the same bytes as the service for the first page, the page at 50 %, status=OPEN and one work order (${openTotal} OPEN)`];
  for (const path of ['/api/v1/records?limit=50&offset=0', `/api/v1/records?limit=50&offset=${half}`, '/api/v1/records?limit=50&status=OPEN&offset=0', idPaths[0]!]) {
    const differs = await sameAnswer(service, reference, path);
    if (differs) throw new Error(differs);
  }
  const proofReads = [rotatingRead(`GET /records/{id}/proof (${proofs.paths.length} sealed proofs in turn)`, proofs.paths)];
  const proofSide = (side: ReadSide): ReadSide => ({ ...side, headers: proofs.headers });
  for (const path of proofs.paths.slice(0, 3)) {
    const differs = await sameAnswer(proofSide(service), proofSide(reference), path);
    if (differs) throw new Error(differs);
  }
  notes.push(`the reads reference answered the same bytes as the service for three of the ${proofs.paths.length} sealed proofs`);
  const feedSide = (side: ReadSide): ReadSide => ({ ...side, headers: feed.headers });
  for (const path of ['/api/v1/events?after=0&limit=50', feed.followed[0]!]) {
    const differs = await sameAnswer(feedSide(service), feedSide(reference), path);
    if (differs) throw new Error(differs);
  }
  notes.push(`the reads reference answered the same bytes as the service for the feed's first page and a page after position ${feed.followed[0]!.split('after=')[1]}`);
  const sample = await sampledPaths(service, total, openTotal);
  const diff = await diffAnswers(service, reference, sample);
  const identical = check(
    `${ANSWERS_SAMPLED.toLocaleString('en')} sampled answers (pages at spread offsets and limits, with and without status=OPEN, and single work orders) are byte-identical to the reference's`,
    diff.differing.length === 0 ? `${diff.compared} of ${diff.compared} identical` : `${diff.differing.length} of ${diff.compared} differ; first: ${diff.first}`,
    diff.differing.length === 0,
  );
  const compared = await compareReads({ label: '', reads, service, reference, measure });
  const feedCompared = await compareReads({ label: '', reads: feedReads, service: feedSide(service), reference: feedSide(reference), measure });
  const proofsCompared = await compareReads({ label: '', reads: proofReads, service: proofSide(service), reference: proofSide(reference), measure });
  return {
    measurements: [...compared.measurements, ...feedCompared.measurements, ...proofsCompared.measurements],
    targets: [identical, ...compared.targets, ...feedCompared.targets, ...proofsCompared.targets],
    notes,
  };
}

/** Sealed completion proofs of an organization of their own: its key, the proofs' paths, and the log's verifier key. */
export interface SeededProofs {
  headers: Record<string, string>;
  paths: string[];
  verifierKey: string;
}

/** Work orders completed for the proof reads (about as many): their proofs are the log's leaves, so each inclusion proof is about log2(300) ≈ 9 hashes. */
export const PROOFS_SEALED = 300;

/**
 * PROOFS_SEALED work orders created, started and completed over HTTP in `tenant`'s organization (which
 * must hold proofs:read), read back once every proof is sealed and published.
 */
export async function seedProofs(urls: string | string[], tenant: Tenant): Promise<SeededProofs> {
  const base = Array.isArray(urls) ? urls[0]! : urls;
  const categoryId = await createCategory(base, tenant);
  const ids: string[] = [];
  const body = JSON.stringify({ resolutionNotes: 'Replaced the trap and tested for leaks.' });
  const done = await runLoad({
    url: urls,
    connections: 10,
    amount: 3 * PROOFS_SEALED,
    requests: [
      { method: 'POST', path: '/api/v1/records', headers: tenant.headers, body: recordBody(categoryId, 1, { assignee: 'Ana' }), onResponse: (status, answer, context) => void (status === 201 && (context.id = (JSON.parse(answer) as { id: string }).id)) },
      { method: 'POST', setupRequest: (request, context) => ({ ...request, path: `/api/v1/records/${String(context.id)}/start`, headers: tenant.headers, body: '{}' }) },
      { method: 'POST', setupRequest: (request, context) => ({ ...request, path: `/api/v1/records/${String(context.id)}/complete`, headers: tenant.headers, body }), onResponse: (status, _answer, context) => void (status === 200 && ids.push(String(context.id))) },
    ],
  });
  // The load ends after 3 × PROOFS_SEALED requests in all, so a connection may stop between its create and its completion.
  if (done.non2xx > 0 || ids.length < 0.9 * PROOFS_SEALED) throw new Error(`completed ${ids.length} of ${PROOFS_SEALED} work orders (${done.non2xx} refused)`);
  const paths = ids.map((id) => `/api/v1/records/${id}/proof`);
  const side = { url: base, headers: tenant.readHeaders, server: { cpuSeconds: () => 0 } };
  await waitFor(`${PROOFS_SEALED} proofs sealed`, 120_000, async () => {
    for (const path of [paths[0]!, paths.at(-1)!]) if ((await fetch(`${base}${path}`, { headers: side.headers })).status !== 200) return undefined;
    return true;
  }, 200);
  const verifierKey = (await (await fetch(`${base}/api/v1/transparency/verifier-key`)).text()).trim();
  return { headers: tenant.readHeaders, paths, verifierKey };
}

/** Events in the feed of an organization of their own, for the feed's reads: its key, every position, and the reads that follow it. */
export interface SeededFeed {
  headers: Record<string, string>;
  sequences: number[];
  /** `GET /events?after=` paths a consumer near the end of the feed sends. */
  followed: string[];
}

/** Events seeded into each bench feed: a work order created per event (record.created; its category announces nothing). */
export const FEED_EVENTS = 10_000;

/**
 * A feed of FEED_EVENTS events, made the way a client makes them (work orders created over HTTP in
 * `tenant`'s organization, which must hold events:read), and read back once the workers have
 * dispatched them all.
 */
export async function seedFeed(urls: string | string[], tenant: Tenant): Promise<SeededFeed> {
  const base = Array.isArray(urls) ? urls[0]! : urls;
  const categoryId = await createCategory(base, tenant);
  const created = await runLoad({ url: urls, connections: 10, amount: FEED_EVENTS, requests: [{ method: 'POST', path: '/api/v1/records', headers: tenant.headers, body: recordBody(categoryId, 1) }] });
  if (created.non2xx > 0) throw new Error(`${created.non2xx} of the feed's creates were refused`);
  const side = { url: base, headers: tenant.readHeaders, server: { cpuSeconds: () => 0 } };
  await waitFor(`${FEED_EVENTS} events in the feed`, 120_000, async () => ((await callApiAs<{ total: number }>(side, '/api/v1/events?limit=1')).total >= FEED_EVENTS ? true : undefined), 200);
  const sequences: number[] = [];
  for (let after = 0; ; ) {
    const page = await callApiAs<{ events: { sequence: number }[] }>(side, `/api/v1/events?after=${after}&limit=100`);
    if (page.events.length === 0) break;
    sequences.push(...page.events.map((event) => event.sequence));
    after = page.events.at(-1)!.sequence;
  }
  // A consumer a page or two behind: each path's page is full (50 events) and its total at most 150.
  const followed = sequences.slice(-150, -50).map((sequence) => `/api/v1/events?after=${sequence}&limit=50`);
  return { headers: tenant.readHeaders, sequences, followed };
}

/** How many answers compareWithReference diffs against the reference's. */
const ANSWERS_SAMPLED = 1000;

/**
 * ANSWERS_SAMPLED paths, the same in every run: a quarter each of whole-list pages and status=OPEN pages
 * at offsets spread over the list with limits from 1 to 100, and single work orders whose ids those pages
 * named (the half that remains).
 */
async function sampledPaths(service: ReadSide, total: number, openTotal: number): Promise<string[]> {
  const pages: string[] = [];
  for (let i = 0; i < ANSWERS_SAMPLED / 2; i++) {
    const open = i % 2 === 1;
    const limit = 1 + ((i * 37) % 100);
    const offset = Math.floor((((i * 7919) % 1000) / 1000) * (open ? openTotal : total));
    pages.push(`/api/v1/records?limit=${limit}${open ? '&status=OPEN' : ''}&offset=${offset}`);
  }
  const ids = new Set<string>();
  for (const page of pages) {
    if (ids.size >= ANSWERS_SAMPLED - pages.length) break;
    const answer = await callApiAs<{ records: { id: string }[] }>(service, page);
    for (const record of answer.records.slice(0, 3)) ids.add(`/api/v1/records/${record.id}`);
  }
  return [...pages, ...[...ids].slice(0, ANSWERS_SAMPLED - pages.length)];
}

async function callApiAs<T>(side: ReadSide, path: string): Promise<T> {
  const base = Array.isArray(side.url) ? side.url[0]! : side.url;
  const response = await fetch(`${base}${path}`, { headers: side.headers });
  if (!response.ok) throw new Error(`GET ${path} answered ${response.status}`);
  return (await response.json()) as T;
}

/** Organization sizes to measure, smallest first; BENCH_LIST_SIZES=10000,100000 shortens a run. */
export function listSizes(): number[] {
  const raw = process.env.BENCH_LIST_SIZES ?? '10000,100000,1000000';
  return raw
    .split(',')
    .map((s) => Number(s.trim()))
    .filter((n) => Number.isInteger(n) && n > 0)
    .sort((a, b) => a - b);
}

/**
 * One organization grows from the smallest size to the largest: stop the service, seed the
 * difference straight into the SQLite file, start it again, then measure `GET /records?limit=50`
 * with and without a status filter at offsets 0, 50 % and 99 % of the matching rows.
 */
export async function runListPart(): Promise<PartResult> {
  const baseline = new Baseline();
  const base = await baseline.at(CONNECTIONS);
  await baseline.at(1);
  const dataDir = temporaryDataDir();
  const sqlitePath = path.join(dataDir, 'wo.sqlite');
  const measurements: Measurement[] = [];
  const memory: PartResult['memory'] = [];
  const notes: string[] = [];
  const targets: TargetCheck[] = [];
  try {
    const tenant = await createTenant(dataDir); // the CLI also creates the schema
    const categoryId = 'cat_01BENCHSEEDCATEGORY000000000';
    seedCategory(sqlitePath, tenant.orgId, categoryId);
    seedDirectory(sqlitePath, tenant.orgId);

    let seeded = 0;
    for (const size of listSizes()) {
      const seed = seedRecords(sqlitePath, { orgId: tenant.orgId, categoryId, count: size - seeded });
      seeded = size;
      notes.push(`seeded ${seed.inserted} work orders in ${seed.seconds.toFixed(1)} s (organization now holds ${seed.totalInOrg})`);

      const service = await startService({ dataDir });
      try {
        const all = await callApi<{ total: number }>(service.baseUrl, tenant, 'GET', '/api/v1/records?limit=1');
        const open = await callApi<{ total: number }>(service.baseUrl, tenant, 'GET', '/api/v1/records?limit=1&status=OPEN');
        if (all.body.total !== size) throw new Error(`the service reports total ${all.body.total}, expected ${size}`);
        const label = size >= 1_000_000 ? `${size / 1_000_000}M` : `${size / 1000}k`;

        for (const [filter, matching] of [['', all.body.total], ['&status=OPEN', open.body.total]] as const) {
          for (const share of [0, 0.5, 0.99]) {
            const offset = Math.floor(matching * share);
            const url = `/api/v1/records?limit=50${filter}&offset=${offset}`;
            await runLoad({ url: service.baseUrl, connections: CONNECTIONS, durationS: 1, path: url, headers: tenant.readHeaders }); // warm-up: page cache, JIT
            const load = () => runLoad({ url: service.baseUrl, server: service, connections: CONNECTIONS, path: url, headers: tenant.readHeaders });
            const name = `list ${label}${filter ? ' status=OPEN' : ''} offset ${offset} (${share * 100}%)`;
            // The one ratio target (1M, offset 0) gets the baseline measured around it.
            const m = size === 1_000_000 && !filter && share === 0 ? bracketedMeasurement(name, await baseline.around(CONNECTIONS, load)) : loadMeasurement(name, await load(), base);
            measurements.push(m);
            if (size === 1_000_000 && !filter && share === 0) {
              targets.push(check('list 1M, offset 0 ≥ 0.05 × baseline req/s', `${m.ratio?.toFixed(4)} × (${m.value} req/s)`, isClean(m) && (m.ratio ?? 0) >= 0.05));
              targets.push(check('list 1M, offset 0 p99 ≤ 50 ms', `${m.p99Ms} ms`, isClean(m) && (m.p99Ms ?? Infinity) <= 50));
            }
            if (!filter && share === 0.5) {
              // One connection shows the cost of a deep page itself; at 10, a single-threaded server
              // adds queueing (p50 ≈ 10 × service time when every request is this expensive).
              const single = await runLoad({ url: service.baseUrl, server: service, connections: 1, path: url, headers: tenant.readHeaders });
              const one = loadMeasurement(`${name}, 1 connection`, single, await baseline.at(1));
              measurements.push(one);
              if (size === 1_000_000) {
                targets.push(check('list 1M, offset 500,000 p50 ≤ 100 ms (1 connection)', `${one.p50Ms} ms`, isClean(one) && (one.p50Ms ?? Infinity) <= 100));
                targets.push(check('list 1M, offset 500,000 p50 ≤ 100 ms (10 connections)', `${m.p50Ms} ms`, isClean(m) && (m.p50Ms ?? Infinity) <= 100));
              }
            }
          }
        }
        // One person's work orders (theirs and their team's), against the status filter's first page.
        const person = benchPersonId(MEASURED_PERSON);
        const named = await callApi<{ total: number }>(service.baseUrl, tenant, 'GET', `/api/v1/records?limit=1&assigneeId=${person}`);
        const expected = seededForPerson(size, MEASURED_PERSON);
        if (named.body.total !== expected) throw new Error(`the service reports ${named.body.total} work orders of ${person}, expected ${expected}`);
        const assigneeUrl = `/api/v1/records?limit=50&assigneeId=${person}`;
        const statusUrl = '/api/v1/records?limit=50&status=OPEN&offset=0';
        await runLoad({ url: service.baseUrl, connections: CONNECTIONS, durationS: 1, path: assigneeUrl, headers: tenant.readHeaders });
        const measureAt = (url: string, name: string) => async () =>
          loadMeasurement(name, await runLoad({ url: service.baseUrl, server: service, connections: CONNECTIONS, path: url, headers: tenant.readHeaders }), base);
        if (size === 100_000) {
          const compared = await measureAssigneeAgainstStatus('list 100k, 1,000 people', {
            assignee: (round) => measureAt(assigneeUrl, `list ${label} assigneeId (${expected} of them) offset 0, round ${round}`)(),
            status: (round) => measureAt(statusUrl, `list ${label} status=OPEN offset 0, round ${round}`)(),
          });
          measurements.push(...compared.measurements);
          targets.push(compared.target);
        } else {
          measurements.push(await measureAt(assigneeUrl, `list ${label} assigneeId (${expected} of them) offset 0`)());
        }

        if (size === READS_REFERENCE_SIZE) {
          const feed = await seedFeed(service.baseUrl, await createTenant(dataDir, undefined, {}, [...BENCH_SCOPES, 'events:read']));
          const proofs = await seedProofs(service.baseUrl, await createTenant(dataDir));
          const reference = await startReadsReference({ REFERENCE_SQLITE_PATH: sqlitePath, REFERENCE_VERIFIER_KEY: proofs.verifierKey });
          try {
            const compared = await compareWithReference(
              label,
              all.body.total,
              open.body.total,
              { url: service.baseUrl, headers: tenant.readHeaders, server: service },
              { url: reference.baseUrl, headers: tenant.readHeaders, server: reference },
              (name, _connections, load) => load().then((figures) => loadMeasurement(name, figures, null)),
              feed,
              proofs,
            );
            measurements.push(...compared.measurements);
            targets.push(...compared.targets);
            notes.push(...compared.notes);
          } finally {
            await reference.stop();
          }
        }

        const peak = service.peakRssMb();
        memory.push({ process: `service, ${label} work orders`, peakRssMb: peak });
      } finally {
        await service.stop();
      }
    }
    if (!listSizes().includes(100_000)) targets.push(check('list 100k assigneeId target', 'not measured: BENCH_LIST_SIZES leaves out 100000', null));
    if (!listSizes().includes(1_000_000)) {
      targets.push(check('list 1M targets', 'not measured: BENCH_LIST_SIZES leaves out 1000000', null));
    }
    const peak = Math.max(...memory.map((m) => m.peakRssMb));
    targets.push(check('peak RSS ≤ 250 MB', `${peak.toFixed(0)} MB`, peak <= 250));
    return {
      part: 'list',
      date: new Date().toISOString(),
      server: serverRunner(),
      measurementSeconds: measurementSeconds(),
      measurements,
      memory,
      targets,
      notes,
      baseline: baseline.all(),
    };
  } finally {
    removeDataDir(dataDir);
  }
}
