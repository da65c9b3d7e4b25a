import type { Logger } from 'pino';
import type { BackgroundJob } from '../background-loop.js';

/**
 * Where a job runs:
 * - `api`: in every process that serves the API (work buffered by that process's requests);
 * - `every-worker`: in every worker process, each doing its share (deliveries are claimed row by row);
 * - `one-worker-at-a-time`: in every worker, but only one of them works at a time: the job claims
 *   its turn in the database (an advisory lock on PostgreSQL; on SQLite there is one process).
 */
export type JobPlacement = 'api' | 'every-worker' | 'one-worker-at-a-time';

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

  /** The loops the worker role runs (`wo worker`, or inside `wo serve`). */
  workerLoops(): BackgroundJob[] {
    return this.jobs.filter((job) => job.placement !== 'api').map((job) => job.loop);
  }

  /** Starts the jobs of a role; a job already started is left running. */
  start(role: 'api' | 'worker', logger?: Pick<Logger, 'info'>): void {
    const jobs = this.jobs.filter((job) => (role === 'api' ? job.placement === 'api' : job.placement !== 'api'));
    for (const job of jobs) {
      this.started.add(job.loop);
      job.loop.start();
    }
    logger?.info({ role, jobs: jobs.map((job) => ({ name: job.loop.name, placement: job.placement, periodMs: job.periodMs })) }, `${role} jobs started`);
  }

  /** Stops every job, started by `start` or directly, and waits for the work in hand. */
  async stopAll(): Promise<void> {
    await Promise.all(this.jobs.map((job) => job.loop.stop()));
  }
}
