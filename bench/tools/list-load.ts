// `GET /api/v1/records?limit=50` over real HTTP against a started service, on a data directory seeded
// once by list-cost.ts (run that first):
//   npx tsx bench/tools/list-load.ts [data dir] [service root]
// The service root defaults to this checkout (built first); pointing it at another build (an export of
// main with its own dist/) gives alternating before/after runs on the same data. Prints req/s, p50/p99
// and server CPU µs per request (/proc/<pid>/stat) for offset 0 and 50 %, at 10 connections.
// LIST_LOAD_OFFSETS=0 leaves out the deep page; BENCH_DURATION_S sets the seconds per measurement.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, readSync } from 'node:fs';
import path from 'node:path';
import { runLoad } from '../lib/load.js';
import { buildService, freePort, ManagedProcess, REPO_ROOT, waitFor } from '../lib/processes.js';

const dataDir = process.argv[2] ?? '/tmp/wo-list-cost-1000000';
const serviceRoot = process.argv[3] ?? REPO_ROOT;
const { key } = JSON.parse(readFileSync(path.join(dataDir, 'list-cost.json'), 'utf8')) as { key: string };
const headers = { authorization: `Bearer ${key}` };
if (serviceRoot === REPO_ROOT) buildService();
// This VM reclaims idle page cache (DAMON): a cold 1 GB file turned the first deep page into 40 s of
// disk reads. Reading it once brings it back, so the figures measure CPU, not the disk.
for (const name of ['wo.sqlite', 'wo.sqlite-wal']) {
  const file = path.join(dataDir, name);
  if (!existsSync(file)) continue;
  const fd = openSync(file, 'r');
  const chunk = Buffer.allocUnsafe(1 << 20);
  while (readSync(fd, chunk, 0, chunk.length, null) > 0);
  closeSync(fd);
}

const port = await freePort();
const child = spawn(process.execPath, [...(process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(/\s+/).filter(Boolean), path.join(serviceRoot, 'dist/main.js'), 'serve'], {
  cwd: serviceRoot,
  env: { ...process.env, WO_DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', DATABASE_URL: '' },
  stdio: ['ignore', 'pipe', 'pipe'],
});
const service = new ManagedProcess('wo serve', child);
const baseUrl = `http://127.0.0.1:${port}`;
try {
  await waitFor('the service', 60_000, async () => ((await fetch(`${baseUrl}/healthz`)).ok ? true : undefined));
  const { total } = (await (await fetch(`${baseUrl}/api/v1/records?limit=1`, { headers })).json()) as { total: number };
  const open = ((await (await fetch(`${baseUrl}/api/v1/records?limit=1&status=OPEN`, { headers })).json()) as { total: number }).total;
  const shares = (process.env.LIST_LOAD_OFFSETS ?? '0,0.5').split(',').map(Number);
  for (const share of shares) {
    for (const [filter, connections] of [['limit=50', 10], ['limit=50&status=OPEN', 10], ['limit=50', 1], ['limit=1', 10]] as const) {
      if (share > 0 && filter === 'limit=1') continue;
      const matching = filter.includes('status=OPEN') ? open : total;
      const url = `/api/v1/records?${filter}&offset=${Math.floor(matching * share)}`;
      await runLoad({ url: baseUrl, connections, durationS: 1, path: url, headers }); // warm-up
      const f = await runLoad({ url: baseUrl, server: service, connections, path: url, headers });
      if (f.non2xx || f.errors) throw new Error(`${url}: ${f.non2xx} non-2xx, ${f.errors} errors`);
      process.stdout.write(
        `${url.padEnd(52)} c${String(connections).padEnd(3)} ${String(f.reqPerSec).padStart(8)} req/s  p50 ${String(f.p50Ms).padStart(4)} ms  p99 ${String(f.p99Ms).padStart(4)} ms  ${String(f.serverCpuUsPerReq).padStart(6)} µs CPU/req  RSS ${service.rssMb().toFixed(0)} MB\n`,
      );
    }
  }
  process.stdout.write(`peak RSS of the service: ${service.peakRssMb().toFixed(0)} MB\n`);
} finally {
  await service.stop();
}
