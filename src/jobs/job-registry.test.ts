import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { BackgroundJob } from '../background-loop.js';
import { JobRegistry, type JobPlacement } from './job-registry.js';

/** A loop that only counts how it is started and stopped. */
function countingLoop(name: string): BackgroundJob & { starts: number; stops: number } {
  return {
    name,
    starts: 0,
    stops: 0,
    start() {
      this.starts++;
    },
    async stop() {
      this.stops++;
    },
  };
}

function registryWith(placements: JobPlacement[]) {
  const jobs = new JobRegistry();
  const loops = placements.map((placement) => {
    const loop = countingLoop(placement);
    jobs.register({ placement, periodMs: 1000, does: placement, loop });
    return loop;
  });
  return { jobs, loops };
}

describe('the job registry', () => {
  it('starts the API’s jobs with the API role and the workers’ with the worker role, the per-process ones with either, each once', () => {
    const { jobs, loops } = registryWith(['api', 'every-worker', 'one-worker-at-a-time', 'every-process']);
    const [api, everyWorker, oneAtATime, everyProcess] = loops;
    jobs.start('api');
    assert.deepEqual([api!.starts, everyWorker!.starts, oneAtATime!.starts, everyProcess!.starts], [1, 0, 0, 1]);
    jobs.start('worker');
    assert.deepEqual([api!.starts, everyWorker!.starts, oneAtATime!.starts, everyProcess!.starts], [1, 1, 1, 1], 'a process taking both roles runs the per-process job once');
  });

  it('lists the worker role’s loops, and stops the API’s jobs without the per-process ones', async () => {
    const { jobs, loops } = registryWith(['api', 'every-worker', 'every-process']);
    assert.deepEqual(jobs.workerLoops().map((loop) => loop.name), ['every-worker']);
    jobs.start('api');
    await jobs.stop('api');
    assert.deepEqual(loops.map((loop) => loop.stops), [1, 0, 0]);
    await jobs.stopAll();
    assert.deepEqual(loops.map((loop) => loop.stops), [2, 1, 1]);
  });

  it('refuses a second job of the same name', () => {
    const { jobs } = registryWith(['api']);
    assert.throws(() => jobs.register({ placement: 'api', periodMs: 1, does: 'again', loop: countingLoop('api') }), /registered twice/);
  });
});
