import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { removeDataDir, runCli, startService, temporaryDataDir, type ApiTarget, type ManagedProcess } from '../lib/processes.js';
import { createTenant, type Tenant } from '../lib/tenant.js';
import type { BenchDatabase } from './bench-database.js';

type ServiceProcess = ManagedProcess & { baseUrl: string };

/**
 * The service as it is deployed on PostgreSQL: N API processes (`serve --no-worker`, each on its own
 * port) and separate `worker` processes, all on one database, one secret key and one keys directory.
 * Processes can be started and stopped in turn on the same database (1 API process, then 2).
 */
export class PostgresDeployment {
  private apis: ServiceProcess[] = [];
  private workers: ServiceProcess[] = [];

  private constructor(
    readonly dataDir: string,
    readonly env: Record<string, string>,
    /** The first organization, made while the schema and keys were set up. */
    readonly tenant: Tenant,
  ) {}

  /**
   * Creates the schema (`wo migrate`) and the first organization, whose CLI run also writes the
   * signing keys: done once before any service starts, so processes starting together do not race
   * to create either.
   */
  static async prepare(database: BenchDatabase, extraEnv: Record<string, string> = {}): Promise<PostgresDeployment> {
    const dataDir = temporaryDataDir();
    const env = {
      DATABASE_URL: database.url,
      // Every process decrypts the webhook secrets any other one stored: one key for all (32 bytes as hex, src/config.ts).
      WO_SECRET_KEY: randomBytes(32).toString('hex'),
      WO_KEYS_DIR: path.join(dataDir, 'keys'),
      // The address a load balancer in front of the API processes would have: links in events and
      // proofs carry it, nothing connects to it.
      WO_PUBLIC_URL: 'http://127.0.0.1:8080',
      ...extraEnv,
    };
    try {
      await runCli(dataDir, ['migrate'], env);
      return new PostgresDeployment(dataDir, env, await createTenant(dataDir, undefined, env));
    } catch (error) {
      removeDataDir(dataDir);
      throw error;
    }
  }

  createTenant(): Promise<Tenant> {
    return createTenant(this.dataDir, undefined, this.env);
  }

  /**
   * Starts `apiProcesses` API processes and `workers` workers, one after the other; `apiNodeArgs` and
   * `workerNodeArgs` are Node options for each kind (a profiler's, say).
   */
  async start(shape: { apiProcesses: number; workers: number; apiNodeArgs?: string[]; workerNodeArgs?: string[] }): Promise<void> {
    for (let i = 0; i < shape.apiProcesses; i++) {
      this.apis.push(await startService({ dataDir: this.dataDir, args: ['serve', '--no-worker'], env: this.env, nodeArgs: shape.apiNodeArgs ?? [] }));
    }
    await this.startWorkers(shape.workers, shape.workerNodeArgs);
  }

  async startWorkers(count: number, nodeArgs: string[] = []): Promise<void> {
    for (let i = 0; i < count; i++) this.workers.push(await startService({ dataDir: this.dataDir, args: ['worker'], env: this.env, nodeArgs }));
  }

  /** The API processes running now, in the order started. */
  get apiProcessList(): readonly ServiceProcess[] {
    return this.apis;
  }

  /** The workers running now, in the order started. */
  get workerProcessList(): readonly ServiceProcess[] {
    return this.workers;
  }

  get apiProcesses(): number {
    return this.apis.length;
  }

  /** The API processes as one load target: connections dealt out among them, CPU summed. */
  get api(): ApiTarget {
    const apis = [...this.apis];
    return { baseUrl: apis[0]!.baseUrl, urls: apis.map((a) => a.baseUrl), cpuSeconds: () => sumCpu(apis) };
  }

  workerCpuSeconds(): number {
    return sumCpu(this.workers);
  }

  /** Peak RSS of every process running now, labelled with `label`. */
  memory(label: string): { process: string; peakRssMb: number }[] {
    return [
      ...this.apis.map((p, i) => ({ process: `API process ${i + 1}, ${label}`, peakRssMb: p.peakRssMb() })),
      ...this.workers.map((p, i) => ({ process: `worker ${i + 1}, ${label}`, peakRssMb: p.peakRssMb() })),
    ];
  }

  async stopWorkers(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.stop()));
    this.workers = [];
  }

  async stop(): Promise<void> {
    await this.stopWorkers();
    await Promise.all(this.apis.map((a) => a.stop()));
    this.apis = [];
  }

  async close(): Promise<void> {
    await this.stop();
    removeDataDir(this.dataDir);
  }
}

function sumCpu(processes: readonly ManagedProcess[]): number {
  return processes.reduce((sum, p) => sum + p.cpuSeconds(), 0);
}
