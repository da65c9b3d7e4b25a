import v8 from 'node:v8';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import { buildApp } from '../app.js';
import { createContext, type AppContext } from '../context.js';
import { announceAdminSetupLink } from '../admin/setup-link.js';

/**
 * Runs the API and/or the background jobs until SIGTERM or SIGINT, then shuts down gracefully:
 * stop accepting requests, finish those in flight, stop the jobs, close the database.
 */
export async function runService(config: Config, roles: { api: boolean; worker: boolean }): Promise<void> {
  limitHeapGrowth(config.heapGrowingPercent);
  const context: AppContext = await createContext(config, { createKeys: true });
  const log = context.logger;
  let app: FastifyInstance | undefined;
  if (roles.api) {
    app = await buildApp(context);
    await app.listen({ port: config.port, host: config.host });
    await announceAdminSetupLink(context);
  }
  if (roles.worker) {
    for (const job of context.backgroundJobs) job.start();
    log.info({ jobs: context.backgroundJobs.map((j) => j.name) }, 'background jobs started');
  }
  log.info({ database: context.database.dialect, dataDir: config.dataDir, api: roles.api, worker: roles.worker }, 'work-order service running');

  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, 'shutting down');
      const hardStop = setTimeout(() => {
        log.error('graceful shutdown took longer than 25 s; exiting');
        process.exit(1);
      }, 25_000);
      hardStop.unref();
      void (async () => {
        try {
          await app?.close();
          await context.close();
        } catch (error) {
          log.error({ err: error }, 'error during shutdown');
        }
        resolve();
      })();
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}

/**
 * The live heap of a service or worker is ~30 MB, but with a large heap limit V8 lets the old
 * generation grow to up to four times what the last full GC kept before collecting again: under
 * sustained load the garbage of requests in flight, promoted out of the young generation, piles up
 * and peak RSS read 200–285 MB for the same work. A fixed growing factor bounds that saw-tooth.
 * Measured (bench/analysis.md, session 3): webhook worker with 100 subscriptions 280 → 218–224 MB,
 * lifecycle service 201–253 → 184–199 MB, CPU per request unchanged.
 *
 * V8 documents flags set after start as unsupported in general; this one is read each time the heap
 * controller computes the next limit (after every full GC), which is what the measurement shows.
 */
function limitHeapGrowth(percent: number): void {
  if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}
