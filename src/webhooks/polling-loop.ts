import type { BackgroundJob } from '../jobs.js';

export interface PollingJob extends BackgroundJob {
  /** Runs the next step now instead of after the idle wait (new work was just written in-process). */
  wake(): void;
}

/**
 * Runs `step` again at once while it finds work, and after `idleMs` once it finds none, so a
 * busy queue drains at full speed and an idle one costs one cheap query per interval.
 */
export function pollingJob(name: string, idleMs: number, step: () => Promise<boolean>, onError: (error: unknown) => void): PollingJob {
  let stopped = true;
  let running: Promise<void> | undefined;
  let wakeSleeper: (() => void) | undefined;
  let wakeRequested = false;

  const idle = () =>
    new Promise<void>((resolve) => {
      if (wakeRequested) return resolve();
      const timer = setTimeout(done, idleMs);
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
