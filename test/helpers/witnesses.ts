import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnWo, stopWo, type WoProcess } from './child-processes.js';
import { waitFor } from './test-app.js';

/** A `wo witness` child process on a port of its choosing, with its own data directory. */
export interface ChildWitness {
  readonly dataDir: string;
  readonly name: string;
  /** http://127.0.0.1:<port>, its submission prefix. */
  url: string;
  process: WoProcess;
  /** Runs `wo witness <args>` (add-log, vkey) against its data directory; answers stdout. */
  cli(args: string[]): Promise<string>;
  vkey(): Promise<string>;
  /** Stops it (SIGTERM) and starts it again on the same data directory and port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
  /** Starts it again after stop(), on the same port. */
  start(): Promise<void>;
  remove(): Promise<void>;
}

function witnessEnv(dataDir: string, name: string, port = 0): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', WO_WITNESS_DATA_DIR: dataDir, WO_WITNESS_NAME: name, WO_WITNESS_PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' };
}

async function startProcess(dataDir: string, name: string, port = 0): Promise<{ process: WoProcess; url: string }> {
  const child = spawnWo(['witness'], witnessEnv(dataDir, name, port));
  const listening = await waitFor(
    () => {
      if (child.child.exitCode !== null) throw new Error(`wo witness exited: ${child.stderr}${child.stdout}`);
      const line = child.stdout.split('\n').find((l) => l.includes('"msg":"witness running"'));
      return line ? (JSON.parse(line) as { port: number }).port : undefined;
    },
    60_000,
    'wo witness to run',
  );
  return { process: child, url: `http://127.0.0.1:${listening}` };
}

export async function startWitness(name: string): Promise<ChildWitness> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'wo-witness-'));
  const started = await startProcess(dataDir, name);
  const witness: ChildWitness = {
    dataDir,
    name,
    url: started.url,
    process: started.process,
    async cli(args) {
      const run = spawnWo(['witness', ...args], witnessEnv(dataDir, name));
      const code = await run.exited;
      if (code !== 0) throw new Error(`wo witness ${args.join(' ')} exited ${code}: ${run.stderr}`);
      return run.stdout.trim();
    },
    vkey: () => witness.cli(['vkey']),
    async restart() {
      await stopWo(witness.process);
      const again = await startProcess(dataDir, name, Number(new URL(witness.url).port));
      witness.process = again.process;
      witness.url = again.url;
    },
    stop: () => stopWo(witness.process),
    async start() {
      const again = await startProcess(dataDir, name, Number(new URL(witness.url).port));
      witness.process = again.process;
    },
    async remove() {
      await stopWo(witness.process);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return witness;
}

/** POST <url>/add-checkpoint with a body, as a log does. */
export async function addCheckpoint(url: string, body: string): Promise<{ status: number; contentType: string; body: string }> {
  const response = await fetch(`${url}/add-checkpoint`, { method: 'POST', body, headers: { 'content-type': 'text/plain; charset=utf-8' } });
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', body: await response.text() };
}
