// Where a completion's CPU goes on PostgreSQL, from the completion request until its
// record.proof_delivered is received, process by process:
//   npx tsx bench/tools/proofs-cost.ts          (BENCH_POSTGRES_URL as for the bench)
// On a fresh database with API_PROCESSES (default 1) API processes and one worker, as
// `npm run bench -- proofs --database postgres` runs them: COMPLETIONS (default 6,000) started work
// orders completed at 50 connections per round, ROUNDS (default 2) rounds after a warm-up of the
// same size, each until every proof is announced. Prints per round the completion rate, the rate
// sealed into the log, and µs of CPU per completion for the API processes, the worker, PostgreSQL
// and this process (load generator, pg_stat_activity sampler; the receiver is a process of its own).
// PERF_DIR=<dir>: also records `perf record -a -g` during each round (perf-round-N.data there), with
// the Node processes started with --perf-basic-prof so that their JavaScript frames have names.
// PROFILE_DIR=<dir>: V8 CPU profiles of the API processes and the worker covering each round
// (bench/lib/cpu-profile-window.mjs; window-<pid>.cpuprofile there, the last round's kept).
// TABLE_STATS=1: also prints, per completion, the commits, WAL bytes and rows written by table (pg_stat_user_tables).
// WAL_DIR: PostgreSQL's pg_wal directory, readable here, to print what each round's WAL holds by record type (pg_waldump on PATH).
// WAL_BY_TABLE=1 (with WAL_DIR): also prints each round's WAL bytes per completion by table or index and record kind.
// STATEMENTS=1: prints each round's statements by time (pg_stat_statements, which the server at BENCH_POSTGRES_URL
// must preload; its database must hold the extension).
// NODE_ARGS: Node options for the API processes and the worker (e.g. a GC setting to try).
// Uses dist/: run `npm run build` first; to compare two builds, run it alternately from each checkout.
import { execFileSync, spawn } from 'node:child_process';
import pg from 'pg';
import path from 'node:path';
import { once } from 'node:events';
import { createCategory } from '../lib/tenant.js';
import { completeAndObserve, PROOF_EVENT, prepareStartedWorkOrders } from '../parts/proofs.js';
import { subscribe, WEBHOOK_ENV } from '../parts/webhooks.js';
import { BenchDatabase } from '../postgres/bench-database.js';
import { PostgresDeployment } from '../postgres/deployment.js';
import { PostgresObserver } from '../postgres/observer.js';
import { describeWaits } from '../postgres/wait-samples.js';
import { REPO_ROOT } from '../lib/processes.js';
import { WebhookReceiver } from '../lib/receiver.js';
import { postgresCheckpointTimes } from '../lib/checkpoint-times.js';

const rounds = Number(process.env.ROUNDS ?? 2);
const count = Number(process.env.COMPLETIONS ?? 6_000);
const apiProcesses = Number(process.env.API_PROCESSES ?? 1);
const perfDir = process.env.PERF_DIR;
const profileDir = process.env.PROFILE_DIR;
const nodeArgs = [...(process.env.NODE_ARGS ?? '').split(/\s+/).filter(Boolean), ...(perfDir ? ['--perf-basic-prof'] : []), ...(profileDir ? ['--import', path.join(REPO_ROOT, 'bench/lib/cpu-profile-window.mjs')] : [])];
if (profileDir) process.env.BENCH_PROFILE_DIR = profileDir;

const tableStats = process.env.TABLE_STATS === '1';

/** Runs one statement on a connection of its own, opened for it and closed after. */
async function queryOnce<T extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** The server's administrative database (BENCH_POSTGRES_URL), where pg_stat_statements lives. */
const SERVER_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Commits, WAL position and rows written by table, for TABLE_STATS (the counters lag up to ~1 s: read after a pause). */
async function writeCounters(url: string): Promise<Map<string, number>> {
  const counters = new Map<string, number>();
  const [db] = await queryOnce<{ commits: string; wal: string }>(url, `SELECT xact_commit AS commits, pg_current_wal_lsn() - '0/0' AS wal FROM pg_stat_database WHERE datname = current_database()`);
  counters.set('commits', Number(db!.commits));
  counters.set('WAL bytes', Number(db!.wal));
  const tables = await queryOnce<{ relname: string; ins: string; upd: string; hot: string; del: string }>(
    url,
    `SELECT coalesce(owner.relname || ' (TOAST)', t.relname) AS relname, n_tup_ins AS ins, n_tup_upd AS upd, n_tup_hot_upd AS hot, n_tup_del AS del
       FROM pg_stat_all_tables t LEFT JOIN pg_class owner ON owner.reltoastrelid = t.relid
      WHERE t.schemaname = 'public' OR (t.schemaname = 'pg_toast' AND owner.relnamespace = 'public'::regnamespace)`,
  );
  for (const t of tables) {
    counters.set(`${t.relname} insert`, Number(t.ins));
    counters.set(`${t.relname} update`, Number(t.upd));
    counters.set(`${t.relname} update (HOT)`, Number(t.hot));
    counters.set(`${t.relname} delete`, Number(t.del));
  }
  return counters;
}

const statementStats = process.env.STATEMENTS === '1';

/**
 * WAL_BY_TABLE: the round's WAL records grouped by the relation of their first block reference
 * (a table, an index, or none for commits) and by kind (`Heap/INSERT`, `Btree/INSERT_LEAF`…), in
 * bytes per completion including full-page images, largest first.
 */
async function printWalByRelation(url: string, from: string, to: string, completions: number): Promise<void> {
  const names = new Map(
    (await queryOnce<{ node: string; name: string }>(url, `SELECT pg_relation_filenode(oid)::text AS node, relname AS name FROM pg_class WHERE pg_relation_filenode(oid) IS NOT NULL`)).map((r) => [r.node, r.name]),
  );
  // Relation file numbers repeat across databases (catalogs copied from the template): keep this database's records.
  const [{ oid: databaseOid }] = (await queryOnce<{ oid: string }>(url, `SELECT oid::text AS oid FROM pg_database WHERE datname = current_database()`)) as [{ oid: string }];
  const dump = execFileSync('pg_waldump', ['-s', from, '-e', to, '-p', process.env.WAL_DIR!], { encoding: 'utf8', maxBuffer: 1 << 30 });
  const bytes = new Map<string, { bytes: number; records: number }>();
  for (const line of dump.split('\n')) {
    const match = /^rmgr: (\S+)\s+len \(rec\/tot\):\s*\d+\/\s*(\d+),.*?desc: (\S+)/.exec(line);
    if (!match) continue;
    const relation = /blkref #0: rel \d+\/(\d+)\/(\d+)/.exec(line);
    if (relation && relation[1] !== databaseOid) continue;
    const node = relation?.[2];
    const key = `${node ? (names.get(node) ?? `filenode ${node}`) : '-'}  ${match[1]}/${match[3]}`;
    const entry = bytes.get(key) ?? { bytes: 0, records: 0 };
    entry.bytes += Number(match[2]);
    entry.records += 1;
    bytes.set(key, entry);
  }
  const rows = [...bytes].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, 30);
  console.log('  WAL per completion by relation and record kind (bytes, records):');
  for (const [key, { bytes: b, records }] of rows) console.log(`  ${(b / completions).toFixed(0).padStart(7)}  ${(records / completions).toFixed(2).padStart(6)}  ${key}`);
}

const database = await BenchDatabase.create();
const observer = await PostgresObserver.connect(database.url);
const deployment = await PostgresDeployment.prepare(database, WEBHOOK_ENV);
const receiver = await WebhookReceiver.start();
try {
  await deployment.start({ apiProcesses, workers: 1, apiNodeArgs: nodeArgs, workerNodeArgs: nodeArgs });
  const { api, tenant } = deployment;
  if (!(await subscribe(api.baseUrl, tenant, receiver, 1, [PROOF_EVENT], 'proofs-cost'))) throw new Error('could not subscribe the receiver');
  const categoryId = await createCategory(api.baseUrl, tenant);
  const ready = await prepareStartedWorkOrders(api.urls ?? api.baseUrl, tenant, categoryId, count * (rounds + 1));
  const body = JSON.stringify({ resolutionNotes: 'Replaced the thermostat and tested the circuit.' });
  const checkpoints = postgresCheckpointTimes(database.url);
  await completeAndObserve(api, tenant, receiver, checkpoints, ready.splice(0, count), body, { connections: 50 }); // warm-up
  for (let round = 1; round <= rounds; round++) {
    const countersBefore = tableStats ? (await new Promise((resolve) => setTimeout(resolve, 1500)), await writeCounters(database.url)) : undefined;
    const walAt = async () => (await queryOnce<{ lsn: string }>(database.url, 'SELECT pg_current_wal_lsn()::text AS lsn'))[0]!.lsn;
    const walBefore = process.env.WAL_DIR ? await walAt() : undefined;
    if (statementStats) await queryOnce(SERVER_URL, 'SELECT pg_stat_statements_reset()');
    const apiBefore = api.cpuSeconds!();
    const workerBefore = deployment.workerCpuSeconds();
    const selfBefore = process.cpuUsage();
    // The first SIGUSR2 starts a profile, the second writes it.
    const toggleProfiles = () => profileDir && [...deployment.apiProcessList, ...deployment.workerProcessList].forEach((p) => process.kill(p.pid, 'SIGUSR2'));
    toggleProfiles();
    const perf = perfDir ? spawn('perf', ['record', '-a', '-g', '-F', '999', '-o', path.join(perfDir, `perf-round-${round}.data`)], { stdio: 'ignore' }) : undefined;
    const { result, cost } = await observer.during(() => completeAndObserve(api, tenant, receiver, checkpoints, ready.splice(0, count), body, { connections: 50 }));
    if (perf) {
      perf.kill('SIGINT');
      await once(perf, 'exit');
    }
    toggleProfiles();
    const self = process.cpuUsage(selfBefore);
    const per = (cpuSeconds: number) => Math.round((cpuSeconds * 1e6) / Math.max(1, result.completed));
    const sealedRate = result.sealedAt ? Math.round(result.completed / ((result.sealedAt - result.started) / 1000)) : 0;
    const apiUs = per(api.cpuSeconds!() - apiBefore);
    const workerUs = per(deployment.workerCpuSeconds() - workerBefore);
    const postgresUs = per(cost.cpuSeconds);
    const selfUs = per((self.user + self.system) / 1e6);
    console.log(
      `round ${round}: ${result.load.reqPerSec} completions/s answered, ${sealedRate}/s sealed, ${result.announced}/${result.completed} announced, p99 ${result.load.p99Ms} ms; ` +
        `µs CPU per completion: API ${apiUs}, worker ${workerUs}, PostgreSQL ${postgresUs}, this process ${selfUs}, sum ${apiUs + workerUs + postgresUs + selfUs}`,
    );
    console.log(`  waits: ${describeWaits(cost.waits, 6)}`);
    if (walBefore) {
      const walAfter = await walAt();
      console.log(execFileSync('pg_waldump', ['--stats=record', '-s', walBefore, '-e', walAfter, '-p', process.env.WAL_DIR!], { encoding: 'utf8' }));
      if (process.env.WAL_BY_TABLE === '1') await printWalByRelation(database.url, walBefore, walAfter, result.completed);
    }
    if (statementStats) {
      const rows = await queryOnce<{ query: string; calls: string; total: number; rows: string }>(
        SERVER_URL,
        `SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), 160) AS query, calls, total_exec_time + total_plan_time AS total, rows
           FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1 ORDER BY total DESC LIMIT 40`,
        [new URL(database.url).pathname.slice(1)],
      );
      const all = rows.reduce((sum, r) => sum + r.total, 0);
      console.log(`  statements (top 40, ${Math.round((all * 1000) / result.completed)} µs per completion in all):`);
      for (const r of rows)
        console.log(`  ${((r.total * 1000) / result.completed).toFixed(1).padStart(6)} µs/compl  ${(Number(r.calls) / result.completed).toFixed(2).padStart(6)} calls/compl  ${((r.total * 1000) / Number(r.calls)).toFixed(1).padStart(7)} µs/call  ${r.query}`);
    }
    if (countersBefore) {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const after = await writeCounters(database.url);
      const lines = [...after]
        .map(([name, value]) => [name, (value - (countersBefore.get(name) ?? 0)) / result.completed] as const)
        .filter(([, perCompletion]) => perCompletion >= 0.005)
        .map(([name, perCompletion]) => `  ${name}: ${perCompletion.toFixed(2)}`);
      console.log(`  per completion:\n${lines.join('\n')}`);
    }
  }
} finally {
  await receiver.stop();
  await deployment.stop();
  await deployment.close();
  await observer.close();
  await database.drop();
}
