import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import v8 from 'node:v8';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import { buildApp } from '../app.js';
import { buildWorkerApp } from '../worker-app.js';
import { createContext, type AppContext } from '../context.js';
import { announceAdminSetupLink } from '../admin/setup-link.js';

/** Once the server closes, what is still in flight has this long to finish before the process gives up. */
const CLOSE_TIMEOUT_MS = 25_000;

/**
 * Runs the API and/or the background jobs until SIGTERM or SIGINT, then shuts down gracefully:
 * /readyz answers 503 at once while everything else is still served for WO_SHUTDOWN_DRAIN_MS (a load
 * balancer's time to stop sending requests here; a second signal cuts it short; no drain when
 * stdout is a terminal, where Ctrl-C means stop now), then the server
 * stops accepting, the requests in flight finish, the jobs stop and the database closes.
 */
export async function runService(config: Config, roles: { api: boolean; worker: boolean }): Promise<void> {
  limitHeapGrowth(config.heapGrowingPercent);
  // Which process holds a connection, in pg_stat_activity: `wo-api pid 4242`, `wo-worker pid 4243`.
  const applicationName = `${roles.api && roles.worker ? 'wo-serve' : roles.api ? 'wo-api' : 'wo-worker'} pid ${process.pid}`;
  const context: AppContext = await createContext(config, { createKeys: true, applicationName });
  const log = context.logger;
  let server: FastifyInstance | undefined;
  let setupUrl: string | undefined;
  try {
    if (roles.api) {
      server = await buildApp(context);
      await server.listen({ port: config.port, host: config.host });
      setupUrl = await announceAdminSetupLink(context);
    } else if (config.workerPort > 0) {
      // A worker alone still answers health checks and metrics scrapes (the API does for `wo serve`).
      server = await buildWorkerApp(context);
      await server.listen({ port: config.workerPort, host: config.host });
    }
  } catch (error) {
    // A port in use: nothing started, so nothing is left holding the process open.
    await server?.close();
    await context.close();
    throw error;
  }
  // Every job of the worker role, each with its placement and period (src/jobs/job-registry.ts).
  if (roles.worker) context.jobs.start('worker', log);
  const closeUnusedConnections = server ? unusedConnectionsCloser(server.server) : () => undefined;
  log.info({ database: context.database.dialect, dataDir: config.dataDir, api: roles.api, worker: roles.worker, address: server?.addresses()[0] }, 'work-order service running');
  if (roles.api) log.info(serviceUrls(config.publicUrl, setupUrl), `API ${config.publicUrl}/api/v1 · reference ${config.publicUrl}/docs · admin ${config.publicUrl}/admin${setupUrl ? ` · first administrator ${setupUrl}` : ''}`);

  // A worker that serves no HTTP (WO_WORKER_PORT=0) has nothing for a load balancer to drain; a
  // process in a terminal (`npm run dev`, `npm start`) has a person at Ctrl-C, not a load balancer.
  const interactive = process.stdout.isTTY === true;
  const signal = await shutdownSignal(context, server && !interactive ? config.shutdownDrainMs : 0);
  const hardStop = setTimeout(() => {
    log.error(`graceful shutdown took longer than ${CLOSE_TIMEOUT_MS / 1000} s; exiting`);
    process.exit(1);
  }, CLOSE_TIMEOUT_MS);
  hardStop.unref();
  // Until the server has closed, and again for any accepted meanwhile (see unusedConnectionsCloser).
  const sweep = setInterval(closeUnusedConnections, UNUSED_CONNECTION_SWEEP_MS);
  closeUnusedConnections();
  try {
    await server?.close();
    await context.close();
    log.info({ signal }, 'shut down');
  } catch (error) {
    log.error({ err: error }, 'error during shutdown');
  } finally {
    clearInterval(sweep);
  }
}

const UNUSED_CONNECTION_SWEEP_MS = 100;

/** Where a person starts: the API, its reference, the admin area, and the first administrator's setup link while there is one. */
function serviceUrls(publicUrl: string, setupUrl: string | undefined) {
  return { urls: { api: `${publicUrl}/api/v1`, docs: `${publicUrl}/docs`, admin: `${publicUrl}/admin`, ...(setupUrl ? { setup: setupUrl } : {}) } };
}

/**
 * Closing the server waits for every connection to end, and Node closes for it only those idle
 * between requests: one that never sent a byte (a load balancer's pre-opened connection, a TCP
 * health check) held the process until the hard stop, which then exited 1. Answers a sweep that
 * destroys the server's connections that have sent nothing across two sweeps in a row: bytes already
 * in the kernel's buffer but not yet read (a busy event loop) are read by the next sweep, and their
 * request is answered as any other. One that has started a request is left to finish it.
 */
function unusedConnectionsCloser(server: Server): () => void {
  const connections = new Set<Socket>();
  const silentAtLastSweep = new WeakSet<Socket>();
  server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  return () => {
    for (const socket of connections) {
      if (socket.bytesRead > 0) continue;
      if (silentAtLastSweep.has(socket)) socket.destroy();
      else silentAtLastSweep.add(socket);
    }
  };
}

/**
 * Resolves with the first SIGTERM or SIGINT once the drain that follows it is over. The drain starts
 * at the signal (readiness answers 503 from then on); another signal ends it early, and a signal
 * after the drain (the process is closing) exits at once.
 */
function shutdownSignal(context: AppContext, drainMs: number): Promise<string> {
  const log = context.logger;
  return new Promise((resolve) => {
    let first: string | undefined;
    let endDrain: (() => void) | undefined;
    const onSignal = (signal: string) => {
      if (first === undefined) {
        first = signal;
        context.lifecycle.beginDrain();
        if (drainMs > 0) log.info({ signal, drainMs }, 'shutting down: not ready any more, still serving during the drain');
        else log.info({ signal }, 'shutting down');
        const timer = setTimeout(() => endDrain?.(), drainMs);
        endDrain = () => {
          endDrain = undefined;
          clearTimeout(timer);
          resolve(first!);
        };
      } else if (endDrain) {
        log.info({ signal }, 'drain cut short by a second signal');
        endDrain();
      } else {
        log.warn({ signal }, 'signal after the drain: exiting without finishing the shutdown');
        process.exit(1);
      }
    };
    process.on('SIGTERM', () => onSignal('SIGTERM'));
    process.on('SIGINT', () => onSignal('SIGINT'));
  });
}

/**
 * The live heap of a service or worker is small, but with a large heap limit V8 lets the old
 * generation grow to up to four times what the last full GC kept before collecting again: under
 * sustained load the garbage of requests in flight, promoted out of the young generation, piles up
 * and peak RSS ends up several times the live heap for the same work. A fixed growing factor bounds
 * that saw-tooth: it lowered the peak RSS of both the webhook worker and the lifecycle service,
 * at no cost in CPU per request (bench/analysis.md, session 3).
 *
 * V8 documents flags set after start as unsupported in general; this one is read each time the heap
 * controller computes the next limit (after every full GC), which is what those measurements show.
 */
function limitHeapGrowth(percent: number): void {
  if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}
