import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import assert from 'node:assert/strict';
import { connectFailure } from './db/errors.js';
import { backgroundLoop, ERROR_BACKOFF_CAP_MS, ERROR_LOG_INTERVAL_MS, intervalLoop, type LoopOptions } from './background-loop.js';

/** Lets the promises the loop is waiting on settle (setImmediate is not among the mocked timers). */
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** A step that runs until the test finishes it, asking for `nextWaitMs` before the next. */
function heldStep(nextWaitMs: number) {
  const held = {
    runs: 0,
    finish: () => {},
    step: () =>
      new Promise<number>((resolve) => {
        held.runs++;
        held.finish = () => resolve(nextWaitMs);
      }),
  };
  return held;
}

function recordingLogger() {
  const lines: { level: string; failures: number; cause?: string; loop?: string }[] = [];
  const at = (level: string) => (fields: { failures: number; cause?: string; loop?: string }) => void lines.push({ level, ...fields });
  return { lines, error: at('error'), warn: at('warn'), info: at('info') };
}

/** A loop around `step`, started, its first step run. */
async function startLoop(step: LoopOptions['step'], options: { retryMs?: number; logger?: LoopOptions['logger'] } = {}) {
  const loop = backgroundLoop({ name: 'test', step, retryMs: options.retryMs ?? 100, logger: options.logger ?? recordingLogger(), errorMessage: 'failed' });
  loop.start();
  await settle();
  return loop;
}

describe('a background loop', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'] }));
  afterEach(() => mock.timers.reset());

  it('runs its step again after the wait the step asked for, or as soon as it is woken', async () => {
    let runs = 0;
    const step = async () => {
      runs++;
      return 1000;
    };
    const loop = await startLoop(step);
    assert.equal(runs, 1);
    mock.timers.tick(999);
    await settle();
    assert.equal(runs, 1);
    mock.timers.tick(1);
    await settle();
    assert.equal(runs, 2);
    loop.wake();
    await settle();
    assert.equal(runs, 3);
    await loop.stop();
  });

  it('skips the wait after a step during which it was woken', async () => {
    const held = heldStep(60_000);
    const loop = await startLoop(held.step);
    loop.wake();
    held.finish();
    await settle();
    assert.equal(held.runs, 2);
    held.finish();
    await settle();
    assert.equal(held.runs, 2, 'not woken this time: the loop waits');
    await loop.stop();
  });

  it('tells the step whether the wait before it ran its whole length', async () => {
    const turns: boolean[] = [];
    const step = async ({ waitedInFull }: { waitedInFull: boolean }) => {
      turns.push(waitedInFull);
      return 1000;
    };
    const loop = await startLoop(step);
    mock.timers.tick(1000);
    await settle();
    loop.wake();
    await settle();
    assert.deepEqual(turns, [false, true, false]);
    await loop.stop();
  });

  it('retries a failing step with a doubling wait that a wake does not cut short, up to a cap', async () => {
    const startedAt: number[] = [];
    const failingStep = async () => {
      startedAt.push(Date.now());
      throw new Error('database unavailable');
    };
    const loop = await startLoop(failingStep, { retryMs: 1000 });
    for (let elapsed = 0; elapsed < 40_000; elapsed += 100) {
      loop.wake();
      mock.timers.tick(100);
      await settle();
    }
    const waits = startedAt.slice(1).map((at, i) => at - startedAt[i]!);
    assert.deepEqual(waits.slice(0, 6), [1000, 2000, 4000, 8000, ERROR_BACKOFF_CAP_MS, ERROR_BACKOFF_CAP_MS]);
    await loop.stop();
  });

  it('logs a failing step at most once a minute, with the number of failures since the last line', async () => {
    const logger = recordingLogger();
    let runs = 0;
    const failingStep = async () => {
      runs++;
      throw new Error('database unavailable');
    };
    const loop = await startLoop(failingStep, { retryMs: 10, logger });
    assert.deepEqual(logger.lines.map((line) => line.failures), [1]);
    // Past the minute by one capped wait, so that a failure falls after it.
    for (let elapsed = 0; elapsed < ERROR_LOG_INTERVAL_MS + ERROR_BACKOFF_CAP_MS; elapsed += 1000) {
      mock.timers.tick(1000);
      await settle();
    }
    assert.equal(logger.lines.length, 2);
    assert.ok(logger.lines[1]!.failures > 1 && logger.lines[1]!.failures < runs);
    await loop.stop();
  });

  it('logs a database outage as a warning with its cause, and says when it runs again', async () => {
    const logger = recordingLogger();
    let failing = true;
    const step = async () => {
      // As the pool throws it when PostgreSQL refuses the connection (connectFailure).
      if (failing) throw connectFailure(Object.assign(new Error('database "wo" is not currently accepting connections'), { code: '55000' }));
      return 1000;
    };
    const loop = await startLoop(step, { retryMs: 100, logger });
    for (let i = 0; i < 5; i++) {
      mock.timers.tick(ERROR_BACKOFF_CAP_MS);
      await settle();
    }
    assert.deepEqual(
      logger.lines.map(({ level, cause, failures }) => ({ level, cause, failures })),
      [{ level: 'warn', cause: 'connection_refused', failures: 1 }],
      'one line within the minute',
    );
    failing = false;
    mock.timers.tick(ERROR_BACKOFF_CAP_MS);
    await settle();
    assert.equal(logger.lines.length, 2);
    assert.equal(logger.lines[1]!.level, 'info');
    assert.ok(logger.lines[1]!.failures > 1, 'it counts every failed turn');
    await loop.stop();
  });

  it('stops only once the step in flight has finished, and runs no step after it', async () => {
    const held = heldStep(0);
    const loop = await startLoop(held.step);
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await settle();
    assert.equal(stopped, false);
    held.finish();
    await stopping;
    assert.equal(held.runs, 1);
  });

  it('runs an interval loop first after one interval, then every interval', async () => {
    let runs = 0;
    const loop = intervalLoop({ name: 'test', intervalMs: 500, work: async () => runs++, logger: recordingLogger(), errorMessage: 'failed' });
    loop.start();
    await settle();
    assert.equal(runs, 0);
    mock.timers.tick(500);
    await settle();
    mock.timers.tick(500);
    await settle();
    assert.equal(runs, 2);
    await loop.stop();
  });
});
