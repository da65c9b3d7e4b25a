import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { stopAllProcesses } from '../lib/processes.js';

/**
 * The PostgreSQL server the benchmark creates its databases on, as a URL of its maintenance database
 * (CREATE and DROP DATABASE are issued there). BENCH_POSTGRES_URL overrides the local default.
 */
export function postgresServerUrl(): string {
  return process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
}

async function onServer(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: postgresServerUrl() });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** Databases created and not yet dropped, so an interrupted run can drop them (dropOnInterrupt). */
const created = new Set<BenchDatabase>();
/** Set by dropOnInterrupt: a part still running must not create a database it would leave behind. */
let interrupted = false;

/** A database of its own for one part, `wo_bench_<random>`: nothing of another run or of the tests is in it. */
export class BenchDatabase {
  private constructor(
    readonly name: string,
    readonly url: string,
  ) {}

  static async create(): Promise<BenchDatabase> {
    if (interrupted) throw new Error('the run was interrupted');
    // Only hex digits follow the prefix, so the name needs no quoting.
    const name = `wo_bench_${randomBytes(4).toString('hex')}`;
    await onServer(`CREATE DATABASE ${name}`);
    const url = new URL(postgresServerUrl());
    url.pathname = `/${name}`;
    const database = new BenchDatabase(name, url.toString());
    created.add(database);
    return database;
  }

  /** Drops the database, closing whatever connections are still open on it (a process that did not stop). */
  async drop(): Promise<void> {
    created.delete(this);
    await onServer(`DROP DATABASE IF EXISTS ${this.name} WITH (FORCE)`);
  }
}

/**
 * On SIGINT or SIGTERM: stop the child processes, drop every bench database, exit 130. Without it an
 * interrupted run would leave a database of up to a million work orders behind. A second signal exits at once.
 */
export function dropOnInterrupt(): void {
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) process.exit(130);
    interrupted = true;
    const names = [...created].map((d) => d.name).join(', ') || 'none';
    process.stderr.write(`\nbench: ${signal}: stopping the processes and dropping the bench databases (${names}) …\n`);
    void (async () => {
      await stopAllProcesses().catch(() => {});
      for (const database of [...created]) {
        await database.drop().catch((error: unknown) => process.stderr.write(`bench: could not drop ${database.name}: ${String(error)}\n`));
      }
      process.exit(130);
    })();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}
