// Attachment upload and download throughput against a real `wo serve` child process, and the
// service's peak RSS growth during concurrent large uploads:
//   npx tsx bench/tools/attachments.ts [sqlite|postgres|both]       (default: sqlite)
// PostgreSQL uses WO_BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test) to create a
// scratch database, dropped afterwards. BENCH_SERVER=tsx runs the sources instead of dist/.
// Prints MB/s (10^6 bytes per second of wall time, client side) for each file size and connection
// count, and the growth of VmHWM over the VmRSS before 10 concurrent 25 MB uploads (/proc).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { Agent, request } from 'undici';
import { loadConfig } from '../../src/config.js';
import { createContext } from '../../src/context.js';
import { ManagedProcess, REPO_ROOT, buildService, freePort, readRss, removeDataDir, serverRunner, temporaryDataDir, waitFor } from '../lib/processes.js';

const MB = 1_000_000;
const MiB = 1024 * 1024;
const SIZES = [
  { label: '100 KB', bytes: 100 * 1000, uploads: 400 },
  { label: '5 MB', bytes: 5 * MB, uploads: 40 },
  { label: '25 MB', bytes: 25 * MiB, uploads: 20 },
];
const CONNECTIONS = [1, 10];
const which = process.argv[2] ?? 'sqlite';
const dialects = which === 'both' ? ['sqlite', 'postgres'] : [which];
const adminUrl = process.env.WO_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A JPEG header and random bytes: what a photo looks like to the media-type check, and incompressible. */
function photoOf(bytes: number): Buffer {
  const head = Buffer.from('ffd8ffe000104a46494600010100000100010000', 'hex');
  return Buffer.concat([head, randomBytes(bytes - head.length)]);
}

/** Writes VmHWM back to the current RSS (Linux `clear_refs` 5), so the next peak is this phase's own. */
function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

interface Service {
  process: ManagedProcess;
  baseUrl: string;
  key: string;
  recordId: string;
  stop(): Promise<void>;
}

async function startServe(dialect: string): Promise<Service> {
  const dataDir = temporaryDataDir();
  let databaseUrl: string | undefined;
  let dropDatabase = async () => {};
  if (dialect === 'postgres') {
    const name = `wo_bench_files_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    databaseUrl = Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString();
    dropDatabase = async () => {
      const dropper = new pg.Client({ connectionString: adminUrl });
      await dropper.connect();
      await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await dropper.end();
    };
  }
  const env = { WO_DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) };

  // The organization, key and work order, made in this process through the services (also on PostgreSQL).
  const context = await createContext(loadConfig(env), { logger: pino({ level: 'silent' }) });
  const org = await context.organizations.create('attachments bench');
  const { key } = await context.apiKeys.create({ orgId: org.id, name: 'bench', scopes: ['records:read', 'records:write', 'categories:write'], createdBy: 'bench' });
  const principal = await context.apiKeys.authenticate(key);
  const category = await context.categories.create(org.id, { name: 'Plumbing' });
  const record = await context.records.create(principal, { categoryId: category.id, address: '1 Main Street', requesterName: 'Bench', description: 'Photos' });
  await context.close();

  const port = await freePort();
  const entry = serverRunner() === 'dist' ? [path.join(REPO_ROOT, 'dist', 'main.js')] : ['--import', 'tsx', path.join(REPO_ROOT, 'src', 'main.ts')];
  const { DATABASE_URL: _ignored, ...inherited } = process.env;
  const child = spawn(process.execPath, [...entry, 'serve'], { cwd: REPO_ROOT, env: { ...inherited, ...env, PORT: String(port), HOST: '127.0.0.1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  const managed = new ManagedProcess('wo serve', child);
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitFor('the service to answer /healthz', 60_000, async () => ((await fetch(`${baseUrl}/healthz`)).ok ? true : undefined));
  return {
    process: managed,
    baseUrl,
    key,
    recordId: record.id,
    async stop() {
      await managed.stop();
      await dropDatabase();
      removeDataDir(dataDir);
    },
  };
}

/** Runs `count` operations over `connections` parallel lanes; answers the wall time in seconds. */
async function timed(connections: number, count: number, operation: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      for (let i = next++; i < count; i = next++) await operation(i);
    }),
  );
  return (performance.now() - started) / 1000;
}

async function measure(dialect: string): Promise<void> {
  const service = await startServe(dialect);
  const agent = new Agent({ connections: 16, keepAliveTimeout: 30_000 });
  const authorization = `Bearer ${service.key}`;
  const uploadUrl = `${service.baseUrl}/api/v1/records/${service.recordId}/attachments?filename=photo.jpg`;
  const upload = async (body: Buffer): Promise<string> => {
    const response = await request(uploadUrl, { method: 'POST', dispatcher: agent, headers: { authorization, 'content-type': 'image/jpeg' }, body });
    const text = await response.body.text();
    if (response.statusCode !== 201) throw new Error(`upload answered ${response.statusCode}: ${text}`);
    return (JSON.parse(text) as { id: string }).id;
  };
  const download = async (id: string, expected: number): Promise<void> => {
    const response = await request(`${service.baseUrl}/api/v1/records/${service.recordId}/attachments/${id}/content`, { dispatcher: agent, headers: { authorization } });
    let received = 0;
    for await (const piece of response.body) received += (piece as Buffer).length;
    if (response.statusCode !== 200 || received !== expected) throw new Error(`download answered ${response.statusCode} with ${received} of ${expected} bytes`);
  };

  try {
    // Warm-up (JIT, pools), then the memory phase on a quiet process: 10 uploads of 25 MiB at once.
    const large = photoOf(25 * MiB);
    await upload(photoOf(MB));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const before = readRss(service.process.pid)!;
    resetPeak(service.process.pid);
    const seconds = await timed(10, 10, () => upload(large).then(() => undefined));
    const after = readRss(service.process.pid)!;
    process.stdout.write(
      `[${dialect}] 10 concurrent 25 MiB uploads: ${((10 * large.length) / MB / seconds).toFixed(1)} MB/s; RSS before ${before.rssMb.toFixed(0)} MiB, ` +
        `peak during ${after.peakMb.toFixed(0)} MiB: growth ${(after.peakMb - before.rssMb).toFixed(1)} MiB (goal < 60)\n`,
    );

    for (const size of SIZES) {
      const file = size.bytes === large.length ? large : photoOf(size.bytes);
      for (const connections of CONNECTIONS) {
        const count = Math.max(size.uploads, connections);
        const ids: string[] = [];
        const up = await timed(connections, count, async () => {
          ids.push(await upload(file));
        });
        const down = await timed(connections, count, (i) => download(ids[i]!, file.length));
        const total = (count * file.length) / MB;
        process.stdout.write(
          `[${dialect}] ${size.label.padStart(6)} × ${String(count).padStart(3)}, ${String(connections).padStart(2)} connection(s): ` +
            `upload ${(total / up).toFixed(1).padStart(6)} MB/s, download ${(total / down).toFixed(1).padStart(6)} MB/s\n`,
        );
      }
    }
    process.stdout.write(`[${dialect}] service peak RSS over the whole run: ${service.process.peakRssMb().toFixed(0)} MiB\n`);
  } finally {
    await agent.close();
    await service.stop();
  }
}

if (serverRunner() === 'dist') buildService();
for (const dialect of dialects) await measure(dialect);
