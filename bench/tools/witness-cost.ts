// What one local witness costs the service, in one run: the proofs part's completion measurements
// (full speed, then 500 completions/s) on a fresh SQLite service without a witness policy, then on
// another with one `wo witness` in WO_WITNESS_POLICY; and serving a full tile against serving the
// checkpoint, on the second.
//   BENCH_SERVER=tsx BENCH_DURATION_S=5 npx tsx bench/tools/witness-cost.ts
// Prints per run the rate sealed into the log, the rate announced (record.proof_delivered: with a
// policy, after the witness cosigned), the paced completion → delivery p99, and the tile/checkpoint
// load figures with the server's µs of CPU per request.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Baseline, runLoad } from '../lib/load.js';
import { freePort, REPO_ROOT, removeDataDir, startService, temporaryDataDir } from '../lib/processes.js';
import { WebhookReceiver } from '../lib/receiver.js';
import { sqliteCheckpointTimes } from '../lib/checkpoint-times.js';
import { createCategory, createTenant } from '../lib/tenant.js';
import { measureCompletions, PROOF_EVENT } from '../parts/proofs.js';
import { subscribe, WEBHOOK_ENV } from '../parts/webhooks.js';

function wo(args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.once('exit', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`wo ${args.join(' ')} exited ${code}`))));
  });
}

const base = await new Baseline().at(20);
const results: Array<Record<string, unknown>> = [];
for (const witnessed of [false, true]) {
  const dataDir = temporaryDataDir();
  const witnessDir = path.join(dataDir, 'witness');
  const witnessEnv = { WO_WITNESS_DATA_DIR: witnessDir, WO_WITNESS_NAME: 'bench.test/witness', WO_WITNESS_PORT: String(await freePort()), HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
  const witness = witnessed ? spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'witness'], { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '', ...witnessEnv }, stdio: 'ignore' }) : undefined;
  const env: Record<string, string> = { ...WEBHOOK_ENV };
  if (witnessed) {
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
    await subscribe(api.baseUrl, tenant, receiver, 1, [PROOF_EVENT], 'witness-cost');
    const categoryId = await createCategory(api.baseUrl, tenant);
    const runs = await measureCompletions(api, tenant, receiver, categoryId, base, sqliteCheckpointTimes(dataDir));
    const row: Record<string, unknown> = { witnessed, sealedPerS: runs.sealedRate, announcedPerS: runs.announcedRate, pacedP99Ms: runs.pacedP99, pacedAnnounced: `${runs.paced.announced}/${runs.paced.completed}` };
    if (witnessed) {
      const tile = await runLoad({ url: `${api.baseUrl}/api/v1/transparency/tile/0/000`, server: api, connections: 20 });
      const checkpoint = await runLoad({ url: `${api.baseUrl}/api/v1/transparency/checkpoint`, server: api, connections: 20 });
      row.fullTile = { reqPerSec: tile.reqPerSec, p99Ms: tile.p99Ms, cpuUsPerReq: tile.serverCpuUsPerReq, non2xx: tile.non2xx };
      row.checkpoint = { reqPerSec: checkpoint.reqPerSec, p99Ms: checkpoint.p99Ms, cpuUsPerReq: checkpoint.serverCpuUsPerReq, non2xx: checkpoint.non2xx };
    }
    results.push(row);
    console.log(JSON.stringify(row));
  } finally {
    await receiver.stop();
    await api.stop();
    witness?.kill('SIGTERM');
    removeDataDir(dataDir);
  }
}
const [without, withWitness] = results as Array<{ sealedPerS: number; announcedPerS: number; pacedP99Ms: number }>;
console.log(
  JSON.stringify({
    announcedRatio: Math.round((withWitness!.announcedPerS / without!.announcedPerS) * 100) / 100,
    sealedRatio: Math.round((withWitness!.sealedPerS / without!.sealedPerS) * 100) / 100,
    pacedP99RiseMs: withWitness!.pacedP99Ms - without!.pacedP99Ms,
  }),
);
