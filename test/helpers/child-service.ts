import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from './test-app.js';

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/main.ts');

/** A `wo` service (serve or worker) running as a child process, as an operator runs it. */
export interface ChildService {
  readonly child: ChildProcess;
  /** http://127.0.0.1:<port> of its HTTP server (the API's, or the worker's WO_WORKER_PORT), if it has one. */
  readonly base: string;
  /** Its stdout and stderr so far (JSON log lines). */
  logs(): string;
  /** Resolves with the exit code (or signal name) once it has exited. */
  readonly exited: Promise<number | string>;
  /** True while the process runs. */
  alive(): boolean;
  /** SIGKILL if still running (test clean-up). */
  kill(): Promise<void>;
}

/**
 * Starts `wo <args>` with `env` on top of the test's environment and waits until /healthz answers on
 * `port`, or (without a port) until it logs that it runs.
 */
export async function startChildService(args: string[], env: Record<string, string>, port?: number): Promise<ChildService> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  let running = true;
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => {
      running = false;
      resolve(code ?? signal ?? 'unknown');
    });
  });
  const base = `http://127.0.0.1:${port}`;
  const service: ChildService = {
    child,
    base,
    logs: () => output,
    exited,
    alive: () => running,
    async kill() {
      if (running) child.kill('SIGKILL');
      await exited;
    },
  };
  try {
    await waitFor(async () => {
      if (!running) throw new Error(`wo ${args.join(' ')} exited while starting:\n${output}`);
      // Its own word first: until it says it runs, whatever answers on `port` may be another
      // process that took the port after freePort() let it go.
      if (!output.includes('"msg":"work-order service running"')) return false;
      return port === undefined || (await fetch(`${base}/healthz`).catch(() => undefined))?.ok;
    }, 60_000, `wo ${args.join(' ')} to answer /healthz`);
  } catch (error) {
    await service.kill();
    throw error;
  }
  return service;
}
