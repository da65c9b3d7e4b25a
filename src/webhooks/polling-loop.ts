import type { BackgroundJob } from '../jobs.js';

export interface PollingJob extends BackgroundJob {
  /** Runs the next step now instead of after the idle wait (new work was just written in-process). */
  wake(): void;
}

/** While work was found within BUSY_WINDOW_MS, an empty poll waits only BUSY_POLL_MS before the next. */
export const BUSY_POLL_MS = 2;
export const BUSY_WINDOW_MS = 1000;

/**
 * What a step found: `true` a full batch (more is likely waiting: run again at once), `'partial'` some
 * work but less than a batch (the queue is drained: let more gather for `settleMs` first), `false` none.
 */
export type StepResult = boolean | 'partial';

/**
 * Runs `step` again at once while it finds full batches; after a partial one, waits `settleMs` so the
 * next batch is larger; once it finds none, polls every BUSY_POLL_MS for a second (events tend to come
 * in streams, and each poll is one indexed query), then every `idleMs`. A backlog drains at full speed,
 * a steady stream is handled in batches rather than one small transaction per event-loop turn, and a
 * quiet queue costs one cheap query per interval.
 */
export function pollingJob(
  name: string,
  idleMs: number,
  step: () => Promise<StepResult>,
  onError: (error: unknown) => void,
  settleMs = 0,
): PollingJob {
  let stopped = true;
  let running: Promise<void> | undefined;
  let wakeSleeper: (() => void) | undefined;
  let wakeRequested = false;

  let lastWorkAt = 0;
  const idle = (ms: number) =>
    new Promise<void>((resolve) => {
      if (wakeRequested) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wakeSleeper = undefined;
        resolve();
      }
      wakeSleeper = done;
    });

  const loop = async () => {
    while (!stopped) {
      wakeRequested = false;
      let found: StepResult = false;
      try {
        found = await step();
        if (found) lastWorkAt = Date.now();
      } catch (error) {
        onError(error);
      }
      if (stopped || found === true) continue;
      if (found === 'partial') await idle(settleMs);
      else await idle(Date.now() - lastWorkAt < BUSY_WINDOW_MS ? Math.min(BUSY_POLL_MS, idleMs) : idleMs);
    }
  };

  return {
    name,
    start() {
      if (!stopped) return;
      stopped = false;
      running = loop();
    },
    async stop() {
      stopped = true;
      wakeSleeper?.();
      await running;
    },
    wake() {
      wakeRequested = true;
      wakeSleeper?.();
    },
  };
}
