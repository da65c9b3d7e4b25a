// Where a PostgreSQL create's slow requests come from: one deployment (1 API process, WORKERS workers,
// default 1) on a fresh database, creates at 50 connections, and a timeline of latency per 250 ms with
// the API process's GC pauses (--trace-gc) and PostgreSQL's checkpoints beside it.
//   npx tsx bench/tools/create-tail.ts      (uses dist/: run `npm run build` first)
// PROBE_S: seconds of warm-up and of measurement (10); IDLE_S: seconds the service sits idle between
// them (0; the bench's create measures the baseline there, about 12 s); API_NODE_ARGS: Node options
// for the API process (default --trace-gc; " " for none, since tracing costs a little); POOL:
// WO_DATABASE_POOL_SIZE for every process (default: the service's own); WAL_DIR: PostgreSQL's pg_wal
// directory, readable here, to print what the run's WAL holds by record type (pg_waldump on PATH).
import { execFileSync } from 'node:child_process';
import autocannon, { type Result } from 'autocannon';
import pg from 'pg';
import { BenchDatabase, dropOnInterrupt } from '../postgres/bench-database.js';
import { PostgresDeployment } from '../postgres/deployment.js';
import { createCategory } from '../lib/tenant.js';
import { createRequests } from '../parts/create.js';

const seconds = Number(process.env.PROBE_S ?? 10);
const workers = Number(process.env.WORKERS ?? 1);
dropOnInterrupt();
const database = await BenchDatabase.create();
const deployment = await PostgresDeployment.prepare(database, process.env.POOL ? { WO_DATABASE_POOL_SIZE: process.env.POOL } : {});
try {
  const apiNodeArgs = (process.env.API_NODE_ARGS ?? '--trace-gc').split(/\s+/).filter(Boolean);
  await deployment.start({ apiProcesses: 1, workers, apiNodeArgs });
  const { api } = deployment;
  const categoryId = await createCategory(api.baseUrl, deployment.tenant);
  const requests = createRequests(deployment.tenant, categoryId);
  await autocannon({ url: api.baseUrl, connections: 50, duration: seconds, requests });
  // The bench measures the baseline between its warm-up and its measurement: the service sits idle.
  await new Promise((resolve) => setTimeout(resolve, Number(process.env.IDLE_S ?? 0) * 1000));

  const apiProcess = deployment.apiProcessList[0]!;
  const gcPauses: { at: number; ms: number; line: string }[] = [];
  apiProcess.child.stdout!.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      const match = /(Scavenge|Mark-Compact|Mark-sweep)[^,]*?, ([\d.]+) \/ [\d.]+ ms/.exec(line) ?? /(Scavenge|Mark-Compact|Mark-sweep).*? ([\d.]+) ms/.exec(line);
      if (match) gcPauses.push({ at: Date.now(), ms: Number(match[2]), line: match[1]! });
    }
  });
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  const checkpointsBefore = (await admin.query('SELECT checkpoints_timed + checkpoints_req AS n, buffers_checkpoint FROM pg_stat_bgwriter')).rows[0];
  const walBefore = (await admin.query('SELECT pg_current_wal_lsn() AS lsn')).rows[0].lsn as string;

  const start = Date.now();
  const samples: { at: number; ms: number }[] = [];
  const result = await new Promise<Result>((resolve, reject) => {
    const instance = autocannon({ url: api.baseUrl, connections: 50, duration: seconds, requests }, (error, finished) => (error ? reject(error) : resolve(finished)));
    instance.on('response', (_client, _status, _bytes, responseTime) => samples.push({ at: Date.now(), ms: responseTime }));
  });
  const checkpointsAfter = (await admin.query('SELECT checkpoints_timed + checkpoints_req AS n, buffers_checkpoint FROM pg_stat_bgwriter')).rows[0];
  const walAfter = (await admin.query('SELECT pg_current_wal_lsn() AS lsn')).rows[0].lsn as string;
  const walBytes = (await admin.query('SELECT pg_wal_lsn_diff($1, $2) AS bytes', [walAfter, walBefore])).rows[0].bytes as string;
  await admin.end();

  console.log(`${result.requests.total} creates, ${Math.round(result.requests.total / result.duration)} req/s, p50 ${result.latency.p50} p90 ${result.latency.p90} p99 ${result.latency.p99} max ${result.latency.max} ms`);
  console.log(`WAL ${(Number(walBytes) / result.requests.total / 1024).toFixed(1)} KB per create; checkpoints during the run: ${checkpointsAfter.n - checkpointsBefore.n} (buffers ${checkpointsAfter.buffers_checkpoint - checkpointsBefore.buffers_checkpoint})`);
  // Read before the database is dropped: the drop's checkpoint lets PostgreSQL recycle the segments.
  if (process.env.WAL_DIR) console.log(execFileSync('pg_waldump', ['--stats=record', '-s', walBefore, '-e', walAfter, '-p', process.env.WAL_DIR], { encoding: 'utf8' }));
  const firstSecond = samples.filter((s) => s.at - start < 1000).map((s) => s.ms).sort((a, b) => a - b);
  const slow = samples.filter((s) => s.ms > 50);
  console.log(`first second: ${firstSecond.length} creates, p99 ${firstSecond[Math.floor(firstSecond.length * 0.99)]?.toFixed(0)} ms; over 50 ms: ${slow.length} in all, ${slow.filter((s) => s.at - start < 1000).length} of them in the first second`);
  const bucketMs = 250;
  for (let t = 0; t < seconds * 1000; t += bucketMs) {
    const inBucket = samples.filter((s) => s.at - start >= t && s.at - start < t + bucketMs).map((s) => s.ms).sort((a, b) => a - b);
    const gc = gcPauses.filter((g) => g.at - start >= t && g.at - start < t + bucketMs);
    const gcMs = gc.reduce((sum, g) => sum + g.ms, 0);
    const big = gc.filter((g) => g.line !== 'Scavenge').map((g) => `${g.line} ${g.ms}`);
    const p99 = inBucket[Math.floor(inBucket.length * 0.99)] ?? 0;
    const ms = (value: number | undefined) => (value ?? 0).toFixed(0).padStart(4);
    console.log(`${String(t).padStart(6)} ms  n ${String(inBucket.length).padStart(4)}  p50 ${ms(inBucket[Math.floor(inBucket.length / 2)])}  p99 ${ms(p99)}  max ${ms(inBucket.at(-1))}  gc ${gc.length} ${gcMs.toFixed(1)} ms ${big.join(' ')}`);
  }
} finally {
  await deployment.close();
  await database.drop();
}
