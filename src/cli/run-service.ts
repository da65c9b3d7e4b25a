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
  const context: AppContext = await createContext(config);
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
