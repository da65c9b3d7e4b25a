// Server CPU per request under one load, optionally with a CPU profile of just that load:
//   npx tsx bench/tools/profile-load.ts <create|complete|get> [--profile] [--subscribe] [--no-worker]
// BENCH_DATABASE_URL=postgres://… runs the service on that (empty or migrated) PostgreSQL database instead of SQLite.
// create:   POST /api/v1/records with a fresh Idempotency-Key (NO_IDEMPOTENCY_KEY=1: without), CONNS (default 50) connections, 8 s.
// complete: COMPLETIONS (default 3,000) work orders created and started first, then completed at CONNS
//           (default 20) connections. --subscribe adds a receiver subscribed to record.proof_delivered,
//           as the bench does, and then also reports the server CPU of the whole pipeline per
//           completion: from the first completion until the last announcement was received.
// get:      GET /api/v1/categories/{id}, 50 connections, 6 s: the fixed cost every authenticated route pays.
// record:   GET /api/v1/records/{id} of one work order, CONNS (default 10) connections, 6 s: the single read beside its reference (issue 51).
//           --reference then runs the same load against bench/reference-reads-server.ts on the same SQLite
//           file (or PostgreSQL database) and prints its CPU per request beside the service's (and with
//           --profile, its profile of that load too). On PostgreSQL the CPU is the process's alone.
// feed:     GET /api/v1/events?after= a consumer 150 events behind sends (50 events a page), after 3,000
//           work orders were created; CONNS (default 10) connections, 6 s. --reference as for record.
// proof:    GET /api/v1/records/{id}/proof over the bench's 300 sealed proofs in turn (bench/parts/list.ts's seedProofs),
//           CONNS (default 10) connections, 6 s. --reference as for record (the reference gets the log's verifier key).
// list:     GET /api/v1/records?limit=50 over 200 work orders, 10 connections, 6 s (the bench's list page).
// lifecycle: the bench's lifecycle mix (create → assign → start → complete → close), CONNS (default 50) connections, 8 s.
// --profile starts the built service with bench/lib/cpu-profile-window.mjs and writes
// window-<pid>.cpuprofile (BENCH_PROFILE_DIR, default the OS temp dir) covering only the measured load;
// summarize it with `node bench/tools/summarize-profile.mjs <file>`. Uses dist/: run `npm run build` first.
// BENCH_PERF_DIR=<dir> also records the service's native stacks during the measured load with Linux
// `perf record` (perf-<pid>.data there): where a JavaScript profile shows only a native call (SQLite's
// `all`, `writev`), `perf report` says what runs inside it. BENCH_SERVICE_NODE_ARGS=--perf-basic-prof
// names the JIT's frames too; with --reference the reference is recorded as well (its JIT frames named).
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { RequestSpec } from 'autocannon';
import { runLoad, type LoadOptions } from '../lib/load.js';
import { startReadsReference } from '../lib/read-references.js';
import { readCpuSeconds, REPO_ROOT, removeDataDir, startService, temporaryDataDir, waitFor } from '../lib/processes.js';
import { WebhookReceiver } from '../lib/receiver.js';
import { BENCH_SCOPES, callApi, createCategory, createTenant, recordBody } from '../lib/tenant.js';
import { lifecycleRequests } from '../parts/lifecycle.js';
import { seedProofs } from '../parts/list.js';
import { subscribe, WEBHOOK_ENV } from '../parts/webhooks.js';

const scenario = process.argv[2];
if (!['create', 'complete', 'get', 'record', 'feed', 'proof', 'list', 'lifecycle'].includes(scenario ?? '')) {
  console.error('usage: npx tsx bench/tools/profile-load.ts <create|complete|get|record|feed|proof|list|lifecycle> [--profile] [--subscribe] [--no-worker]');
  process.exit(2);
}
const profile = process.argv.includes('--profile');
const dataDir = temporaryDataDir();
const databaseEnv: Record<string, string> = process.env.BENCH_DATABASE_URL ? { DATABASE_URL: process.env.BENCH_DATABASE_URL } : {};
const service = await startService({
  dataDir,
  args: process.argv.includes('--no-worker') ? ['serve', '--no-worker'] : ['serve'],
  env: { ...WEBHOOK_ENV, ...databaseEnv },
  nodeArgs: profile ? ['--import', path.join(REPO_ROOT, 'bench/lib/cpu-profile-window.mjs')] : [],
});
const receiver = await WebhookReceiver.start();
try {
  const tenant = await createTenant(dataDir, undefined, databaseEnv, [...BENCH_SCOPES, 'events:read']);
  const categoryId = await createCategory(service.baseUrl, tenant);
  let options: LoadOptions;
  let verifierKey: string | undefined;
  if (scenario === 'create') {
    let n = 0;
    // NO_IDEMPOTENCY_KEY=1: the same creates without the header, to see what idempotency adds.
    const withKey = !process.env.NO_IDEMPOTENCY_KEY;
    const spec: RequestSpec = {
      method: 'POST',
      path: '/api/v1/records',
      setupRequest: (r) => ({ ...r, body: recordBody(categoryId, 1), headers: withKey ? { ...tenant.headers, 'idempotency-key': `p-${process.pid}-${++n}` } : tenant.headers }),
    };
    options = { url: service.baseUrl, connections: Number(process.env.CONNS ?? 50), durationS: 8, requests: [spec] };
  } else if (scenario === 'lifecycle') {
    options = { url: service.baseUrl, connections: Number(process.env.CONNS ?? 50), durationS: 8, requests: lifecycleRequests(tenant, categoryId) };
  } else if (scenario === 'list') {
    await runLoad({ url: service.baseUrl, connections: 10, amount: 200, requests: [{ method: 'POST', path: '/api/v1/records', headers: tenant.headers, body: recordBody(categoryId, 5) }] });
    options = { url: service.baseUrl, connections: 10, durationS: 6, path: '/api/v1/records?limit=50', headers: tenant.readHeaders };
  } else if (scenario === 'record') {
    const created = await callApi<{ id: string }>(service.baseUrl, tenant, 'POST', '/api/v1/records', JSON.parse(recordBody(categoryId, 1)));
    options = { url: service.baseUrl, connections: Number(process.env.CONNS ?? 10), durationS: 6, path: `/api/v1/records/${created.body.id}`, headers: tenant.readHeaders };
  } else if (scenario === 'feed') {
    await runLoad({ url: service.baseUrl, connections: 10, amount: 3000, requests: [{ method: 'POST', path: '/api/v1/records', headers: tenant.headers, body: recordBody(categoryId, 1) }] });
    const feedTotal = async () => (await callApi<{ total: number }>(service.baseUrl, tenant, 'GET', '/api/v1/events?limit=1')).body.total;
    await waitFor('3,000 events in the feed', 60_000, async () => ((await feedTotal()) >= 3000 ? true : undefined), 200);
    const page = await callApi<{ events: { sequence: number }[] }>(service.baseUrl, tenant, 'GET', '/api/v1/events?after=2849&limit=1');
    options = { url: service.baseUrl, connections: Number(process.env.CONNS ?? 10), durationS: 6, path: `/api/v1/events?after=${page.body.events[0]!.sequence - 1}&limit=50`, headers: tenant.readHeaders };
  } else if (scenario === 'proof') {
    const proofs = await seedProofs(service.baseUrl, tenant);
    verifierKey = proofs.verifierKey;
    let turn = 0;
    options = { url: service.baseUrl, connections: Number(process.env.CONNS ?? 10), durationS: 6, requests: [{ method: 'GET', setupRequest: (r) => ({ ...r, path: proofs.paths[turn++ % proofs.paths.length]!, headers: proofs.headers }) }] };
  } else if (scenario === 'get') {
    options = { url: service.baseUrl, connections: 50, durationS: 6, path: `/api/v1/categories/${categoryId}`, headers: tenant.readHeaders };
  } else {
    if (process.argv.includes('--subscribe')) await subscribe(service.baseUrl, tenant, receiver, 1, ['record.proof_delivered'], 'profile');
    const ready: string[] = [];
    await runLoad({
      url: service.baseUrl,
      connections: 20,
      amount: 2 * Number(process.env.COMPLETIONS ?? 3000),
      requests: [
        { method: 'POST', path: '/api/v1/records', headers: tenant.headers, body: recordBody(categoryId, 3, { assignee: 'T' }), onResponse: (s, b, c) => void (s === 201 && (c.id = (JSON.parse(b) as { id: string }).id)) },
        { method: 'POST', setupRequest: (r, c) => (c.id ? { ...r, path: `/api/v1/records/${String(c.id)}/start`, headers: tenant.headers, body: '{}' } : null), onResponse: (s, b) => void (s === 200 && ready.push((JSON.parse(b) as { id: string }).id)) },
      ],
    });
    const body = JSON.stringify({ resolutionNotes: 'Replaced the thermostat and tested the circuit.' });
    options = { url: service.baseUrl, connections: Number(process.env.CONNS ?? 20), amount: ready.length, requests: [{ method: 'POST', setupRequest: (r) => ({ ...r, path: `/api/v1/records/${ready.shift() ?? 'rec_none'}/complete`, headers: tenant.headers, body }) }] };
  }
  if (scenario !== 'complete') await runLoad({ ...options, durationS: 2 }); // warm-up
  const groupsBefore = await groupCommitCounters(service.baseUrl);
  const subscribed = scenario === 'complete' && process.argv.includes('--subscribe');
  await receiver.reset();
  const cpuBefore = readCpuSeconds(service.pid);
  const mainBefore = readCpuSeconds(service.pid, 'main-thread');
  if (profile) process.kill(service.pid, 'SIGUSR2');
  const figures = await recordingNativeStacks(service.pid, () => runLoad({ ...options, server: service }));
  if (subscribed) {
    const started = Date.now();
    await receiver.waitForCount(figures.requests, 120_000, 'record.proof_delivered');
    const perCompletion = (before: number, now: number) => Math.round(((now - before) * 1e6) / figures.requests);
    console.log(
      `pipeline: ${perCompletion(cpuBefore, readCpuSeconds(service.pid))} µs server CPU (${perCompletion(mainBefore, readCpuSeconds(service.pid, 'main-thread'))} µs on the event loop) ` +
        `per completion through its announcement (last one ${Date.now() - started} ms after the load)`,
    );
  }
  if (profile) process.kill(service.pid, 'SIGUSR2');
  const groupsAfter = await groupCommitCounters(service.baseUrl);
  const commits = groupsAfter.commits - groupsBefore.commits;
  console.log(
    `${scenario}: ${figures.reqPerSec} req/s, p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms, ${figures.serverCpuUsPerReq} µs server CPU/req, non-2xx ${figures.non2xx}; ` +
      `${commits} group commits, ${(figures.requests / Math.max(1, commits)).toFixed(1)} requests and ${((groupsAfter.members - groupsBefore.members) / Math.max(1, commits)).toFixed(1)} members per commit`,
  );
  if (profile) {
    await new Promise((resolve) => setTimeout(resolve, 1000)); // the profile is written asynchronously
    console.log(`profile: ${process.env.BENCH_PROFILE_DIR ?? '$TMPDIR'}/window-${service.pid}.cpuprofile`);
  }
  if ((scenario === 'record' || scenario === 'feed' || scenario === 'proof') && process.argv.includes('--reference')) {
    const preload = `--import=${path.join(REPO_ROOT, 'bench/lib/cpu-profile-window.mjs')}`;
    const database = process.env.BENCH_DATABASE_URL ? { REFERENCE_DATABASE_URL: process.env.BENCH_DATABASE_URL } : { REFERENCE_SQLITE_PATH: path.join(dataDir, 'wo.sqlite') };
    const reference = await startReadsReference({ ...database, ...(verifierKey ? { REFERENCE_VERIFIER_KEY: verifierKey } : {}), ...(profile ? { NODE_OPTIONS: preload } : process.env.BENCH_PERF_DIR ? { NODE_OPTIONS: '--perf-basic-prof' } : {}) });
    try {
      const referenceLoad = { ...options, url: reference.baseUrl, server: reference };
      await runLoad({ ...referenceLoad, durationS: 2 }); // warm-up
      if (profile) process.kill(reference.pid, 'SIGUSR2');
      const measured = await recordingNativeStacks(reference.pid, () => runLoad(referenceLoad));
      if (profile) process.kill(reference.pid, 'SIGUSR2');
      console.log(`reference: ${measured.reqPerSec} req/s, p50 ${measured.p50Ms} ms, p99 ${measured.p99Ms} ms, ${measured.serverCpuUsPerReq} µs server CPU/req, non-2xx ${measured.non2xx}`);
      if (profile) {
        await new Promise((resolve) => setTimeout(resolve, 1000)); // the profile is written asynchronously
        console.log(`reference profile: ${process.env.BENCH_PROFILE_DIR ?? '$TMPDIR'}/window-${reference.pid}.cpuprofile`);
      }
    } finally {
      await reference.stop();
    }
  }
} finally {
  await receiver.stop();
  await service.stop();
  removeDataDir(dataDir);
}

/** The SQLite group-commit counters from /metrics (commits, members). */
async function groupCommitCounters(baseUrl: string): Promise<{ commits: number; members: number }> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const read = (name: string) => Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1] ?? NaN);
  return { commits: read('wo_sqlite_group_commits_total'), members: read('wo_sqlite_group_members_total') };
}

/** Runs `load`, with Linux `perf record` on process `pid` meanwhile when BENCH_PERF_DIR is set. */
async function recordingNativeStacks<T>(pid: number, load: () => Promise<T>): Promise<T> {
  const dir = process.env.BENCH_PERF_DIR;
  if (!dir) return load();
  const file = path.join(dir, `perf-${pid}.data`);
  const perf = spawn('perf', ['record', '-g', '-F', '999', '-p', String(pid), '-o', file], { stdio: 'ignore' });
  try {
    return await load();
  } finally {
    const exited = new Promise((resolve) => perf.once('exit', resolve));
    perf.kill('SIGINT');
    await exited;
    console.log(`perf: ${file}`);
  }
}
