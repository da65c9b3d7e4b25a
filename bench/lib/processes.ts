import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * How the service is launched. `dist` (the default) runs the output of `npm run build`, which the
 * harness builds first, as `npm start` does; `tsx` runs the sources as `npm run dev` does. Measured on this machine, tsx
 * costs about a third more server CPU per create (esbuild's keepNames wraps every function it
 * creates, and source maps are switched on), so the built variant is the fair figure for the code.
 */
export type ServerRunner = 'tsx' | 'dist';

export function serverRunner(): ServerRunner {
  return process.env.BENCH_SERVER === 'tsx' ? 'tsx' : 'dist';
}

/** Compiles src/ into dist/ (`npm run build`) so the `dist` runner measures the current sources. */
export function buildService(): void {
  const result = spawnSync(process.execPath, [path.join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: REPO_ROOT, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`npm run build failed (use BENCH_SERVER=tsx to run the sources):\n${result.stdout}${result.stderr}`);
}

/** Extra node flags for the service only, e.g. BENCH_SERVICE_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof". */
function serviceNodeFlags(): string[] {
  return (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
}

function nodeArgsFor(runner: ServerRunner, flags: string[] = []): string[] {
  if (runner === 'dist') return [...flags, path.join(REPO_ROOT, 'dist', 'main.js')];
  return [...flags, '--import', 'tsx', path.join(REPO_ROOT, 'src', 'main.ts')];
}

/** A free TCP port on 127.0.0.1 (the OS picks it; the tiny race with other processes is acceptable here). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export function temporaryDataDir(): string {
  return mkdtempSync(path.join(tmpdir(), 'wo-bench-'));
}

export function removeDataDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export async function waitFor<T>(what: string, deadlineMs: number, probe: () => Promise<T | undefined> | T | undefined, intervalMs = 50): Promise<T> {
  const until = Date.now() + deadlineMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > until) throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Reads VmRSS and VmHWM (peak) of a process from /proc, in MiB. */
export function readRss(pid: number): { rssMb: number; peakMb: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}

const CLOCK_TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** CPU time (user + system) a process has used so far, in seconds, from /proc/<pid>/stat. */
export function readCpuSeconds(pid: number, thread: 'process' | 'main-thread' = 'process'): number {
  try {
    // A process's stat sums all its threads; task/<pid>/stat is its main thread (the event loop) alone.
    const stat = readFileSync(thread === 'process' ? `/proc/${pid}/stat` : `/proc/${pid}/task/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}

/** Every child process started and not yet exited, so an interrupted run can stop them (stopAllProcesses). */
const running = new Set<ManagedProcess>();

/** Stops every child process still running (an interrupted run; each part stops its own otherwise). */
export async function stopAllProcesses(): Promise<void> {
  await Promise.all([...running].map((managed) => managed.stop()));
}

/** A child process we started, with its RSS watched every 200 ms while it runs. */
export class ManagedProcess {
  private peakSeenMb = 0;
  private readonly sampler: NodeJS.Timeout;
  private stderrTail = '';
  readonly exited: Promise<number | null>;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    this.sampler = setInterval(() => this.sample(), 200);
    this.sampler.unref();
    child.stderr?.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-4000);
    });
    child.stdout?.resume();
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    running.add(this);
    void this.exited.then(() => running.delete(this));
  }

  get pid(): number {
    return this.child.pid!;
  }

  get stderr(): string {
    return this.stderrTail;
  }

  private sample(): { rssMb: number; peakMb: number } | undefined {
    const rss = readRss(this.pid);
    if (rss) this.peakSeenMb = Math.max(this.peakSeenMb, rss.rssMb, rss.peakMb);
    return rss;
  }

  /** CPU seconds used so far: per-request CPU cost holds up far better than req/s on a busy machine. */
  cpuSeconds(): number {
    return readCpuSeconds(this.pid);
  }

  /** Current RSS in MiB. */
  rssMb(): number {
    return this.sample()?.rssMb ?? NaN;
  }

  /** Highest RSS of the process so far (the kernel's high-water mark, or our own samples). */
  peakRssMb(): number {
    this.sample();
    return this.peakSeenMb;
  }

  async stop(): Promise<void> {
    this.sample();
    clearInterval(this.sampler);
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    await this.exited;
    clearTimeout(timer);
  }
}

/**
 * Where a load goes: one service process, or several API processes of one deployment (PostgreSQL),
 * which the load generator deals its connections out to. Set-up calls go to `baseUrl`.
 */
export interface ApiTarget {
  baseUrl: string;
  /** Every API process, when there are several; the load goes to `baseUrl` alone otherwise. */
  urls?: string[];
  /** CPU seconds used so far, summed over the API processes. */
  cpuSeconds(): number;
}

export interface StartServiceOptions {
  dataDir: string;
  args?: string[];
  env?: Record<string, string>;
  /** Extra node flags for this service only (added to BENCH_SERVICE_NODE_ARGS). */
  nodeArgs?: string[];
}

/** Runs `wo <args>` (default `serve`) as a child process and waits until /healthz answers. */
export async function startService(options: StartServiceOptions): Promise<ManagedProcess & { baseUrl: string; port: number }> {
  const port = await freePort();
  const args = options.args ?? ['serve'];
  const child = spawn(process.execPath, [...nodeArgsFor(serverRunner(), [...serviceNodeFlags(), ...(options.nodeArgs ?? [])]), ...args], {
    cwd: REPO_ROOT,
    env: serviceEnv(options.dataDir, { PORT: String(port), ...options.env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const managed = Object.assign(new ManagedProcess(`wo ${args.join(' ')}`, child), { port, baseUrl: `http://127.0.0.1:${port}` });
  if (args[0] === 'worker') return managed;
  const exitedEarly = managed.exited.then((code) => {
    throw new Error(`the service exited (${code}) during start:\n${managed.stderr}`);
  });
  exitedEarly.catch(() => {}); // a normal exit at stop() is no error
  await Promise.race([
    exitedEarly,
    waitFor('the service to answer /healthz', 60_000, async () => ((await fetch(`${managed.baseUrl}/healthz`)).ok ? true : undefined)),
  ]).catch(async (error: unknown) => {
    await managed.stop();
    throw error;
  });
  return managed;
}

function serviceEnv(dataDir: string, extra: Record<string, string>): NodeJS.ProcessEnv {
  // Rate limiting off (a load generator is one client far over any budget), no worker health port (several
  // workers may run at once) and no shutdown drain (no load balancer): the figures measure the service's work.
  const env: NodeJS.ProcessEnv = { ...process.env, WO_DATA_DIR: dataDir, HOST: '127.0.0.1', LOG_LEVEL: 'warn', WO_RATE_LIMIT_PER_MINUTE: '0', WO_WORKER_PORT: '0', WO_SHUTDOWN_DRAIN_MS: '0' };
  // The harness picks the database, whatever the caller's shell says: SQLite unless a part passes DATABASE_URL itself.
  delete env.DATABASE_URL;
  return { ...env, ...extra };
}

/** Runs one CLI command (`wo orgs create …`) to completion and returns its stdout. */
export async function runCli(dataDir: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  const child = spawn(process.execPath, [...nodeArgsFor(serverRunner()), ...args], {
    cwd: REPO_ROOT,
    env: serviceEnv(dataDir, env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`wo ${args.join(' ')} failed (${code}): ${err}`);
  return out;
}

/**
 * Compiles a script under bench/ to plain JavaScript once per run (esbuild, our own sources bundled,
 * packages left to node_modules), so the baseline and reference servers run as the service does, from
 * compiled code: under tsx every function pays esbuild's keepNames wrapper and source maps are on,
 * which would handicap the yardsticks against a service measured from dist/.
 */
const compiledScripts = new Map<string, Promise<string>>();
function compileBenchScript(script: string): Promise<string> {
  let compiled = compiledScripts.get(script);
  if (!compiled) {
    const outfile = path.join(REPO_ROOT, 'node_modules', '.cache', 'wo-bench', script.replace(/\.ts$/, '.mjs'));
    compiled = build({
      entryPoints: [path.join(REPO_ROOT, 'bench', script)],
      outfile,
      bundle: true,
      packages: 'external',
      platform: 'node',
      format: 'esm',
      target: 'node20',
      logLevel: 'error',
    }).then(() => outfile);
    compiledScripts.set(script, compiled);
  }
  return compiled;
}

/** Starts a script under bench/ (the baseline server, the webhook receiver), compiled, and waits until it answers. */
export async function startBenchScript(script: string, healthPath = '/', env: NodeJS.ProcessEnv = {}): Promise<ManagedProcess & { baseUrl: string; port: number }> {
  const port = await freePort();
  const child = spawn(process.execPath, [await compileBenchScript(script)], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const managed = Object.assign(new ManagedProcess(script, child), { port, baseUrl: `http://127.0.0.1:${port}` });
  await waitFor(`${script} to answer`, 30_000, async () => ((await fetch(`${managed.baseUrl}${healthPath}`)).ok ? true : undefined)).catch(async (error: unknown) => {
    await managed.stop();
    throw error;
  });
  return managed;
}
