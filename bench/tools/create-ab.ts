// Alternating A/B of the create path between builds, for a machine too busy for absolute figures:
//   npx tsx bench/tools/create-ab.ts /path/to/checkout-a /path/to/checkout-b   (each with `npm run build` done)
// A checkout may carry Node options and environment for its server after `::`, comma-separated, to
// compare runtime settings on one build: `create-ab.ts . .::--max-semi-space-size=32 .::LOG_LEVEL=info`.
// Runs `node <checkout>/dist/main.js serve` on a fresh data dir, creates with a fresh Idempotency-Key
// at 50 connections (ROUNDS rounds, PROBE_S seconds each, alternating) and prints server CPU per create.
// AB_POSTGRES=postgres://user@host:port runs each round on a fresh PostgreSQL database there instead;
// AB_SCENARIO=lifecycle runs the lifecycle mix (create → assign → start → complete → close) instead.
// On PostgreSQL each round also prints PostgreSQL's CPU per request (every server process) and its waits.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { RequestSpec } from 'autocannon';
import { runLoad } from '../lib/load.js';
import pg from 'pg';
import { ManagedProcess, freePort, readCpuSeconds, waitFor } from '../lib/processes.js';
import { lifecycleRequests } from '../parts/lifecycle.js';
import { PostgresObserver } from '../postgres/observer.js';
import { describeWaits } from '../postgres/wait-samples.js';

/** An empty database on the PostgreSQL server at `serverUrl`, and how to drop it. */
async function freshPostgresDatabase(serverUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `wo_ab_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: `${serverUrl}/postgres` });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  return {
    url: `${serverUrl}/${name}`,
    drop: async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}
const roots = process.argv.slice(2);
const rounds = Number(process.env.ROUNDS ?? 3);
const seconds = Number(process.env.PROBE_S ?? 8);
async function once(spec: string) {
  const [rootArg, flags] = spec.split('::');
  const root = path.resolve(rootArg!);
  const options = flags ? flags.split(',') : [];
  // `NAME=value` items set the server's environment; the others are Node options.
  const nodeArgs = options.filter((o) => o.startsWith('-'));
  const serverEnv = Object.fromEntries(options.filter((o) => !o.startsWith('-')).map((o) => [o.slice(0, o.indexOf('=')), o.slice(o.indexOf('=') + 1)] as [string, string]));
  const dataDir = mkdtempSync(path.join(tmpdir(), 'wo-ab-'));
  // As the bench runs the service: without the per-key rate limit, which would answer most of this load 429.
  const env = { ...process.env, WO_DATA_DIR: dataDir, LOG_LEVEL: 'warn', HOST: '127.0.0.1', WO_RATE_LIMIT_PER_MINUTE: '0' } as NodeJS.ProcessEnv;
  delete env.DATABASE_URL;
  const database = process.env.AB_POSTGRES ? await freshPostgresDatabase(process.env.AB_POSTGRES) : undefined;
  if (database) env.DATABASE_URL = database.url;
  const cli = (args: string[]) => JSON.parse(spawnSync(process.execPath, [path.join(root, 'dist/main.js'), ...args], { env, encoding: 'utf8' }).stdout);
  const org = cli(['orgs', 'create', 'ab', '--json']);
  const key = cli(['keys', 'create', '--org', org.id, '--scopes', 'records:write,records:read,categories:write', '--name', 'ab', '--json']).key;
  const port = await freePort();
  const child = spawn(process.execPath, [...nodeArgs, path.join(root, 'dist/main.js'), 'serve'], { env: { ...env, PORT: String(port), ...serverEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
  const server = new ManagedProcess('svc', child);
  const url = `http://127.0.0.1:${port}`;
  await waitFor('health', 30000, async () => ((await fetch(`${url}/healthz`)).ok ? true : undefined));
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const cat = await (await fetch(`${url}/api/v1/categories`, { method: 'POST', headers, body: JSON.stringify({ name: 'P' }) })).json() as { id: string };
  const body = JSON.stringify({ categoryId: cat.id, address: '1 Load Street', requesterName: 'Bench Requester', description: 'The radiator in room 4 is cold; please send someone this week.' });
  let n = 0;
  const requests =
    process.env.AB_SCENARIO === 'lifecycle'
      ? lifecycleRequests({ orgId: org.id, key, headers, readHeaders: { authorization: headers.authorization } }, cat.id)
      : ([{ method: 'POST', path: '/api/v1/records', setupRequest: (r: RequestSpec) => ({ ...r, body, headers: { ...headers, 'idempotency-key': `ab-${process.pid}-${++n}` } }) }] as RequestSpec[]);
  await runLoad({ url, connections: 10, durationS: 2, requests });
  const mainBefore = readCpuSeconds(server.pid, 'main-thread');
  const observer = database && (await PostgresObserver.connect(database.url));
  const measure = () => runLoad({ url, connections: 50, durationS: seconds, requests, server });
  const { result: f, cost } = observer ? await observer.during(measure) : { result: await measure(), cost: undefined };
  await observer?.close();
  const mainThreadUsPerReq = Math.round(((readCpuSeconds(server.pid, 'main-thread') - mainBefore) * 1e6) / (f.reqPerSec * seconds));
  const postgres = cost && ` PostgreSQL ${Math.round((cost.cpuSeconds * 1e6) / (f.reqPerSec * seconds))} µs/req (${describeWaits(cost.waits)})`;
  const peakRssMb = server.peakRssMb();
  await server.stop();
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
  return { ...f, peakRssMb, mainThreadUsPerReq, postgres: postgres ?? '' };
}
// Each round reverses the order of the one before (A B, B A, A B …): a build measured right after
// another was measured slower in round after round (206 vs 156, 277 vs 190 µs) and the gap mostly
// closed with the order reversed, so a fixed order would favour whichever build comes first.
for (let r = 0; r < rounds; r++) for (const root of r % 2 === 0 ? roots : [...roots].reverse()) {
  const f = await once(root);
  console.log(`${root.padEnd(24)} ${String(f.reqPerSec).padStart(7)} req/s p50 ${f.p50Ms} p99 ${f.p99Ms} ms ${f.serverCpuUsPerReq} µs CPU/req (main thread ${f.mainThreadUsPerReq}) non2xx ${f.non2xx} peak RSS ${f.peakRssMb.toFixed(0)} MB${f.postgres}`);
  // A round whose answers were errors measured the error path, not the create: say so where it shows.
  if (f.non2xx > 0) console.log(`  ^ ${f.non2xx} answers were not 2xx: this round measured something else than the create`);
}
