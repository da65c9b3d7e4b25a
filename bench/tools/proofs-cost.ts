// Where a completion's CPU goes on PostgreSQL, from the completion request until its
// record.proof_delivered is received, process by process:
//   npx tsx bench/tools/proofs-cost.ts          (BENCH_POSTGRES_URL as for the bench)
// On a fresh database with API_PROCESSES (default 1) API processes and one worker, as
// `npm run bench -- proofs --database postgres` runs them: COMPLETIONS (default 6,000) started work
// orders completed at 50 connections per round, ROUNDS (default 2) rounds after a warm-up of the
// same size, each until every proof is announced. Prints per round the completion rate, the rate
// sealed into the log, and µs of CPU per completion for the API processes, the worker, PostgreSQL
// and this process (load generator, checkpoint poller; the receiver is a process of its own).
// PERF_DIR=<dir>: also records `perf record -a -g` during each round (perf-round-N.data there), with
// the Node processes started with --perf-basic-prof so that their JavaScript frames have names.
// PROFILE_DIR=<dir>: V8 CPU profiles of the API processes and the worker covering each round
// (bench/lib/cpu-profile-window.mjs; window-<pid>.cpuprofile there, the last round's kept).
// NODE_ARGS: Node options for the API processes and the worker (e.g. a GC setting to try).
// Uses dist/: run `npm run build` first; to compare two builds, run it alternately from each checkout.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { once } from 'node:events';
import { createCategory } from '../lib/tenant.js';
import { completeAndObserve, PROOF_EVENT, prepareStartedWorkOrders } from '../parts/proofs.js';
import { subscribe, WEBHOOK_ENV } from '../parts/webhooks.js';
import { BenchDatabase } from '../postgres/bench-database.js';
import { PostgresDeployment } from '../postgres/deployment.js';
import { PostgresObserver } from '../postgres/observer.js';
import { REPO_ROOT } from '../lib/processes.js';
import { WebhookReceiver } from '../lib/receiver.js';

const rounds = Number(process.env.ROUNDS ?? 2);
const count = Number(process.env.COMPLETIONS ?? 6_000);
const apiProcesses = Number(process.env.API_PROCESSES ?? 1);
const perfDir = process.env.PERF_DIR;
const profileDir = process.env.PROFILE_DIR;
const nodeArgs = [...(process.env.NODE_ARGS ?? '').split(/\s+/).filter(Boolean), ...(perfDir ? ['--perf-basic-prof'] : []), ...(profileDir ? ['--import', path.join(REPO_ROOT, 'bench/lib/cpu-profile-window.mjs')] : [])];
if (profileDir) process.env.BENCH_PROFILE_DIR = profileDir;

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
  await completeAndObserve(api, tenant, receiver, ready.splice(0, count), body, { connections: 50 }); // warm-up
  for (let round = 1; round <= rounds; round++) {
    const apiBefore = api.cpuSeconds!();
    const workerBefore = deployment.workerCpuSeconds();
    const selfBefore = process.cpuUsage();
    // The first SIGUSR2 starts a profile, the second writes it.
    const toggleProfiles = () => profileDir && [...deployment.apiProcessList, ...deployment.workerProcessList].forEach((p) => process.kill(p.pid, 'SIGUSR2'));
    toggleProfiles();
    const perf = perfDir ? spawn('perf', ['record', '-a', '-g', '-F', '999', '-o', path.join(perfDir, `perf-round-${round}.data`)], { stdio: 'ignore' }) : undefined;
    const { result, cost } = await observer.during(() => completeAndObserve(api, tenant, receiver, ready.splice(0, count), body, { connections: 50 }));
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
  }
} finally {
  await receiver.stop();
  await deployment.stop();
  await deployment.close();
  await observer.close();
  await database.drop();
}
