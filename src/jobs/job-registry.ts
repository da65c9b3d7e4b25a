import type { Logger } from 'pino';
import type { BackgroundJob } from '../background-loop.js';

/**
 * Where a job runs:
 * - `api`: in every process that serves the API (work buffered by that process's requests);
 * - `every-worker`: in every worker process, each doing its share (deliveries are claimed row by row);
 * - `one-worker-at-a-time`: in every worker, but only one of them works at a time: the job claims
 *   its turn in the database (an advisory lock on PostgreSQL; on SQLite there is one process);
 * - `every-process`: in every process that serves, whatever its roles (the SQLite WAL checkpoints of
 *   the process that holds the file).
 */
export type JobPlacement = 'api' | 'every-worker' | 'one-worker-at-a-time' | 'every-process';
export type JobRole = 'api' | 'worker';

/** Whether a job of `placement` runs in a process taking `role`. */
function runsIn(placement: JobPlacement, role: JobRole): boolean {
  if (placement === 'every-process') return true;
  return role === 'api' ? placement === 'api' : placement !== 'api';
}

export interface JobDefinition {
  readonly placement: JobPlacement;
  /** How often it runs, or for a loop that paces itself, its idle poll interval. */
  readonly periodMs: number;
  /** One line for logs and docs: what it does. */
  readonly does: string;
  readonly loop: BackgroundJob;
}

/**
 * Every background loop of the service, registered in one place (by the features' `build`, and by
 * the composition root for the platform's own): `wo serve` and `wo worker` start the jobs of the
 * roles they take on, and stop them all on shutdown.
 */
export class JobRegistry {
  private readonly jobs: JobDefinition[] = [];
  private readonly started = new Set<BackgroundJob>();

  register(job: JobDefinition): void {
    if (this.jobs.some((known) => known.loop.name === job.loop.name)) throw new Error(`job "${job.loop.name}" is registered twice`);
    this.jobs.push(job);
  }

  /** Every registered job, in registration order. */
  all(): readonly JobDefinition[] {
    return this.jobs;
  }

  /** The loops the worker role runs (`wo worker`, or inside `wo serve`), the per-process ones aside. */
  workerLoops(): BackgroundJob[] {
    return this.jobs.filter((job) => job.placement !== 'api' && job.placement !== 'every-process').map((job) => job.loop);
  }

  /** Starts the jobs a process taking `role` runs; a job already started (by the other role) is left running. */
  start(role: JobRole, logger?: Pick<Logger, 'info'>): void {
    const jobs = this.jobs.filter((job) => runsIn(job.placement, role) && !this.started.has(job.loop));
    for (const job of jobs) {
      this.started.add(job.loop);
      job.loop.start();
    }
    logger?.info({ role, jobs: jobs.map((job) => ({ name: job.loop.name, placement: job.placement, periodMs: job.periodMs })) }, `${role} jobs started`);
  }

  /** Stops the jobs only `role` runs (the API's when its app closes), and waits for the work in hand. */
  async stop(role: JobRole): Promise<void> {
    const jobs = this.jobs.filter((job) => runsIn(job.placement, role) && job.placement !== 'every-process');
    await Promise.all(jobs.map((job) => job.loop.stop()));
    for (const job of jobs) this.started.delete(job.loop);
  }

  /** Stops every job, started by `start` or directly, and waits for the work in hand. */
  async stopAll(): Promise<void> {
    await Promise.all(this.jobs.map((job) => job.loop.stop()));
    this.started.clear();
  }
}
