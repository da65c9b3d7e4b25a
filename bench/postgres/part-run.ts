import { Baseline, measurementSeconds, type LoadFigures } from '../lib/load.js';
import { serverRunner } from '../lib/processes.js';
import { WebhookReceiver } from '../lib/receiver.js';
import { skippedPart, type PartResult } from '../lib/results.js';
import { routeExists } from '../lib/tenant.js';
import { FEATURE_MISSING, WEBHOOK_ENV } from '../parts/webhooks.js';
import { BenchDatabase } from './bench-database.js';
import { PostgresDeployment } from './deployment.js';
import { PostgresObserver, type PostgresServerInfo } from './observer.js';

/** What a PostgreSQL part is given: how many API processes to measure with, each in turn. */
export interface PostgresPartOptions {
  apiProcesses: number[];
}

export interface PostgresRun {
  database: BenchDatabase;
  observer: PostgresObserver;
  deployment: PostgresDeployment;
  server: PostgresServerInfo;
}

/**
 * Runs a part on a database of its own, with the schema and a first organization made, and drops
 * the database afterwards whatever happened (an interrupt is handled by dropOnInterrupt).
 */
export async function onFreshDatabase<T>(run: (context: PostgresRun) => Promise<T>, serviceEnv: Record<string, string> = {}): Promise<T> {
  const database = await BenchDatabase.create();
  let observer: PostgresObserver | undefined;
  let deployment: PostgresDeployment | undefined;
  try {
    observer = await PostgresObserver.connect(database.url);
    deployment = await PostgresDeployment.prepare(database, serviceEnv);
    return await run({ database, observer, deployment, server: await observer.serverInfo() });
  } finally {
    await deployment?.close();
    await observer?.close();
    await database.drop();
  }
}

/** The API-process count the targets are checked on: one process when it was measured, else the fewest. */
export function targetProcesses(options: PostgresPartOptions): number {
  return options.apiProcesses.includes(1) ? 1 : Math.min(...options.apiProcesses);
}

export function processesLabel(count: number): string {
  return `${count} API process${count === 1 ? '' : 'es'}`;
}

export function postgresPartResult(
  part: string,
  server: PostgresServerInfo,
  result: Pick<PartResult, 'measurements' | 'memory' | 'targets' | 'notes' | 'baseline'>,
): PartResult {
  return { part, date: new Date().toISOString(), server: serverRunner(), measurementSeconds: measurementSeconds(), database: 'postgres', postgres: server, ...result };
}

/** A part that found its feature missing from this build, saved with the PostgreSQL results. */
export function skippedOnPostgres(part: string, reason: string, server: PostgresServerInfo): PartResult {
  return { ...skippedPart(part, reason, serverRunner(), measurementSeconds()), database: 'postgres', postgres: server };
}

export interface ReceiverRun extends PostgresRun {
  receiver: WebhookReceiver;
  /** The API processes running: the largest count asked for. */
  apiProcesses: number;
  baseline: Baseline;
  /** The baseline at 20 connections, measured first. */
  base: LoadFigures;
}

/**
 * For the parts that watch webhooks arrive: a fresh database with loopback receivers allowed, the
 * local receiver, and the API processes (the largest count asked for) and `workers` workers running.
 * Skipped when this build has no `route`.
 */
export async function onFreshDatabaseWithReceiver(
  part: string,
  options: PostgresPartOptions,
  shape: { workers: number; route: { method: string; path: string } },
  run: (context: ReceiverRun) => Promise<PartResult>,
): Promise<PartResult> {
  const baseline = new Baseline();
  const base = await baseline.at(20);
  const apiProcesses = Math.max(...options.apiProcesses);
  return onFreshDatabase(async (context) => {
    const receiver = await WebhookReceiver.start();
    try {
      await context.deployment.start({ apiProcesses, workers: shape.workers });
      if (!(await routeExists(context.deployment.api.baseUrl, shape.route.method, shape.route.path))) return skippedOnPostgres(part, FEATURE_MISSING, context.server);
      return await run({ ...context, receiver, apiProcesses, baseline, base });
    } finally {
      await receiver.stop();
    }
  }, WEBHOOK_ENV);
}
