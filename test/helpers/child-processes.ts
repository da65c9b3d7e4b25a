import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPostgresDatabase, type TestDialect } from './databases.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** `wo <args>` as a child process, with what it writes and, once it ends, its exit code. */
export interface WoProcess {
  child: ChildProcess;
  stdout: string;
  stderr: string;
  /** Resolves with the exit code (or the signal's name) when the process ends. */
  exited: Promise<number | string>;
}

export function spawnWo(args: string[], env: Record<string, string>): WoProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const handle: WoProcess = {
    child,
    stdout: '',
    stderr: '',
    exited: new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'))),
  };
  child.stdout!.on('data', (chunk: Buffer) => (handle.stdout += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (handle.stderr += chunk.toString('utf8')));
  return handle;
}

/** Ends a child and waits until it is gone. */
export async function stopWo(handle: WoProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (handle.child.exitCode !== null || handle.child.signalCode !== null) return;
  handle.child.kill(signal);
  await handle.exited;
}

/** A new, empty deployment for `wo` child processes: a data directory, on PostgreSQL a database of its own, and their environment. */
export interface EmptyDeployment {
  dataDir: string;
  /** PostgreSQL only. */
  databaseUrl: string | undefined;
  env: Record<string, string>;
  remove(): Promise<void>;
}

export async function emptyDeployment(dialect: TestDialect, name: string): Promise<EmptyDeployment> {
  const dataDir = mkdtempSync(path.join(tmpdir(), `wo-${name}-`));
  const database = dialect === 'postgres' ? await createPostgresDatabase(`wo_${name.replace(/-/g, '_')}`) : undefined;
  return {
    dataDir,
    databaseUrl: database?.url,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      WO_DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
      WO_PUBLIC_URL: 'https://wo.example.com',
      // Several workers and test files run at once: no worker health server on the fixed default port.
      WO_WORKER_PORT: '0',
      ...(database ? { DATABASE_URL: database.url } : {}),
    },
    async remove() {
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Whether a `wo serve`/`wo worker` child (at LOG_LEVEL info) says it runs; throws with its output if it exited. */
export function serviceRunning(handle: WoProcess): boolean {
  if (handle.child.exitCode !== null) throw new Error(`\`wo ${handle.child.spawnargs.slice(4).join(' ')}\` exited with ${handle.child.exitCode}: ${handle.stderr}`);
  return handle.stdout.includes('work-order service running');
}
