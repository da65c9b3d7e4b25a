// The service as real child processes (`wo serve`, `wo worker`) on a database of their own, for tests
// of what only separate processes show: crashes, several API processes, workers apart from the API.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from './test-app.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Starts `wo <args>` from the sources; with `readyPort`, resolves once its /readyz answers 200. */
export async function startChildService(args: string[], env: Record<string, string>, readyPort?: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
  if (readyPort === undefined) return child;
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`wo ${args.join(' ')} exited with ${child.exitCode}`);
      try {
        return (await fetch(`http://127.0.0.1:${readyPort}/readyz`)).ok;
      } catch {
        return false;
      }
    },
    30_000,
    `wo ${args.join(' ')} to be ready`,
  );
  return child;
}

/** SIGKILL, as a crash or the OOM killer would, and wait for the exit. */
export async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}
