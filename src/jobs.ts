/**
 * A loop that runs beside the API (webhook delivery, proof sequencing, housekeeping).
 * `wo serve` runs them in-process unless --no-worker; `wo worker` runs them alone.
 */
export interface BackgroundJob {
  readonly name: string;
  start(): void;
  /** Stops taking new work and resolves once the work in hand is finished or safely abandoned. */
  stop(): Promise<void>;
}

/** Runs `tick` every `intervalMs` without overlapping itself; errors are logged, never fatal. */
export function intervalJob(name: string, intervalMs: number, tick: () => Promise<unknown>, onError: (error: unknown) => void): BackgroundJob {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = true;
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = tick().catch(onError).finally(() => {
        running = undefined;
        schedule();
      });
    }, intervalMs);
    timer.unref();
  };
  return {
    name,
    start() {
      stopped = false;
      schedule();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
