// What one local witness costs (docs/benchmarks.md, "witness"): the proofs part's completion runs on a
// fresh SQLite service without a witness policy and on one with a `wo witness` in WO_WITNESS_POLICY,
// alternating over two rounds because the machine's speed drifts between runs; then serving a full
// tile against serving the checkpoint, on the witnessed service.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Baseline, measurementSeconds, round, runLoad, type LoadFigures } from '../lib/load.js';
import { freePort, REPO_ROOT, removeDataDir, serverRunner, startService, temporaryDataDir } from '../lib/processes.js';
import { WebhookReceiver } from '../lib/receiver.js';
import { sqliteCheckpointTimes } from '../lib/checkpoint-times.js';
import { check, loadMeasurement, type Measurement, type PartResult, type TargetCheck } from '../lib/results.js';
import { createCategory, createTenant } from '../lib/tenant.js';
import { measureCompletions, PROOF_EVENT } from './proofs.js';
import { subscribe, WEBHOOK_ENV } from './webhooks.js';

const ROUNDS = 2;
const MIN_RATE_RATIO = 0.8;
const MAX_P99_RISE_MS = 200;

interface CompletionRound {
  witnessed: boolean;
  sealedPerS: number;
  announcedPerS: number;
  pacedP99Ms: number | null;
  complete: boolean;
  tile?: LoadFigures;
  checkpoint?: LoadFigures;
}

/** `wo …` run to its end; answers what it printed. */
function wo(args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.once('exit', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`wo ${args.join(' ')} exited ${code}`))));
  });
}

async function measureRound(witnessed: boolean, base: LoadFigures, measureTiles: boolean): Promise<CompletionRound> {
  const dataDir = temporaryDataDir();
  const witnessEnv = { WO_WITNESS_DATA_DIR: path.join(dataDir, 'witness'), WO_WITNESS_NAME: 'bench.test/witness', WO_WITNESS_PORT: String(await freePort()), HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
  let witness: ChildProcess | undefined;
  const env: Record<string, string> = { ...WEBHOOK_ENV };
  if (witnessed) {
    witness = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'witness'], { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '', ...witnessEnv }, stdio: 'ignore' });
    const policy = path.join(dataDir, 'policy.txt');
    writeFileSync(policy, `witness W ${await wo(['witness', 'vkey'], witnessEnv)} http://127.0.0.1:${witnessEnv.WO_WITNESS_PORT}\nquorum W\n`);
    env.WO_WITNESS_POLICY = policy;
  }
  const api = await startService({ dataDir, args: ['serve'], env });
  const receiver = await WebhookReceiver.start();
  try {
    if (witnessed) {
      const vkey = (await (await fetch(`${api.baseUrl}/api/v1/transparency/verifier-key`)).text()).trim();
      await wo(['witness', 'add-log', '--origin', vkey.split('+')[0]!, '--vkey', vkey], witnessEnv);
    }
    const tenant = await createTenant(dataDir);
    await subscribe(api.baseUrl, tenant, receiver, 1, [PROOF_EVENT], 'witness');
    const categoryId = await createCategory(api.baseUrl, tenant);
    const runs = await measureCompletions(api, tenant, receiver, categoryId, base, sqliteCheckpointTimes(dataDir));
    const complete = runs.saturated.announced === runs.saturated.completed && runs.paced.announced === runs.paced.completed;
    const round: CompletionRound = { witnessed, sealedPerS: runs.sealedRate, announcedPerS: runs.announcedRate, pacedP99Ms: runs.pacedP99, complete };
    if (measureTiles) {
      // The log holds thousands of leaves by now, so tile 0/000 is full (256 hashes) and immutable.
      round.tile = await runLoad({ url: `${api.baseUrl}/api/v1/transparency/tile/0/000`, server: api, connections: 20 });
      round.checkpoint = await runLoad({ url: `${api.baseUrl}/api/v1/transparency/checkpoint`, server: api, connections: 20 });
    }
    return round;
  } finally {
    await receiver.stop();
    await api.stop();
    witness?.kill('SIGTERM');
    removeDataDir(dataDir);
  }
}

const sum = (rounds: CompletionRound[], key: 'sealedPerS' | 'announcedPerS') => rounds.reduce((total, r) => total + r[key], 0);
const worstP99 = (rounds: CompletionRound[]) => Math.max(...rounds.map((r) => r.pacedP99Ms ?? Infinity));

export async function runWitnessPart(): Promise<PartResult> {
  const seconds = measurementSeconds();
  const base = await new Baseline().at(20);
  const rounds: CompletionRound[] = [];
  for (let n = 0; n < ROUNDS; n++) {
    rounds.push(await measureRound(false, base, false));
    rounds.push(await measureRound(true, base, n === ROUNDS - 1));
  }
  const without = rounds.filter((r) => !r.witnessed);
  const withWitness = rounds.filter((r) => r.witnessed);
  const measurements: Measurement[] = rounds.map((r, n) => ({
    name: `round ${Math.floor(n / 2) + 1}, ${r.witnessed ? 'one witness in the policy' : 'no witness policy'}: completions sealed / announced per s`,
    value: r.sealedPerS,
    unit: 'completions/s',
    p50Ms: null,
    p99Ms: r.pacedP99Ms,
    note: `${r.announcedPerS}/s announced (record.proof_delivered); p99 is completion → delivery at 500 completions/s${r.complete ? '' : '; NOT every completion was announced'}`,
  }));
  const last = withWitness.at(-1)!;
  measurements.push(loadMeasurement('GET /api/v1/transparency/tile/0/000 (a full tile)', last.tile!, base));
  measurements.push(loadMeasurement('GET /api/v1/transparency/checkpoint', last.checkpoint!, base));

  const sealedRatio = round(sum(withWitness, 'sealedPerS') / sum(without, 'sealedPerS'), 2);
  const announcedRatio = round(sum(withWitness, 'announcedPerS') / sum(without, 'announcedPerS'), 2);
  const p99Rise = worstP99(withWitness) - worstP99(without);
  const allAnnounced = rounds.every((r) => r.complete);
  const tileCpu = last.tile!.serverCpuUsPerReq;
  const checkpointCpu = last.checkpoint!.serverCpuUsPerReq;
  const targets: TargetCheck[] = [
    check(
      `with one witness, proofs sealed and announced per s ≥ ${MIN_RATE_RATIO}× without (${ROUNDS} alternating rounds)`,
      `${sealedRatio}× sealed, ${announcedRatio}× announced`,
      allAnnounced && Math.min(sealedRatio, announcedRatio) >= MIN_RATE_RATIO,
    ),
    check(`record.proof_delivered p99 at 500 completions/s rises ≤ ${MAX_P99_RISE_MS} ms`, `${worstP99(without)} → ${worstP99(withWitness)} ms (worst round of each)`, allAnnounced && p99Rise <= MAX_P99_RISE_MS),
    check(
      'a full tile costs less CPU per request than the checkpoint',
      `${tileCpu ?? '–'} µs against ${checkpointCpu ?? '–'} µs`,
      tileCpu !== undefined && checkpointCpu !== undefined && last.tile!.non2xx === 0 && last.checkpoint!.non2xx === 0 ? tileCpu < checkpointCpu : null,
    ),
  ];
  return {
    part: 'witness',
    date: new Date().toISOString(),
    server: serverRunner(),
    measurementSeconds: seconds,
    measurements,
    memory: [],
    targets,
    notes: ['Each round starts a fresh SQLite service (and, witnessed, a fresh `wo witness` on loopback); the rates of a kind are summed over its rounds before the ratio.'],
    baseline: { '20 connections': base },
  };
}
