import type { BackgroundJob } from '../jobs.js';

export interface PollingJob extends BackgroundJob {
  /** Runs the next step now instead of after the idle wait (new work was just written in-process). */
  wake(): void;
}

/** While work was found within BUSY_WINDOW_MS, an empty poll waits only BUSY_POLL_MS before the next. */
export const BUSY_POLL_MS = 2;
export const BUSY_WINDOW_MS = 1000;

/**
 * Runs `step` again at once while it finds work; once it finds none, polls every BUSY_POLL_MS
 * for a second (events tend to come in streams, and each poll is one indexed query), then every
 * `idleMs`. A busy queue drains at full speed and a quiet one costs one cheap query per interval.
 */
export function pollingJob(name: string, idleMs: number, step: () => Promise<boolean>, onError: (error: unknown) => void): PollingJob {
  let stopped = true;
  let running: Promise<void> | undefined;
  let wakeSleeper: (() => void) | undefined;
  let wakeRequested = false;

  let lastWorkAt = 0;
  const idle = () =>
    new Promise<void>((resolve) => {
      if (wakeRequested) return resolve();
      const timer = setTimeout(done, Date.now() - lastWorkAt < BUSY_WINDOW_MS ? Math.min(BUSY_POLL_MS, idleMs) : idleMs);
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
      let foundWork = false;
      try {
        foundWork = await step();
        if (foundWork) lastWorkAt = Date.now();
      } catch (error) {
        onError(error);
      }
      if (!foundWork && !stopped) await idle();
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
