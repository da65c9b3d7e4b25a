import type { Logger } from 'pino';
import { OPERATOR_CAUSES, databaseUnavailable } from './db/errors.js';

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

export interface BackgroundLoop extends BackgroundJob {
  /** Ends the current wait now (new work was just written in this process); a wait after a failure is not cut short. */
  wake(): void;
}

export interface LoopTurn {
  /** The wait before this turn ran its whole length: nothing woke the loop early. */
  readonly waitedInFull: boolean;
}

export interface LoopOptions {
  name: string;
  /** One unit of work; resolves to how long to wait before the next (0: at once). */
  step: (turn: LoopTurn) => Promise<number>;
  /** Wait before the first step; 0 (the default) runs it at once. */
  firstWaitMs?: number;
  /** The wait after a failed step, doubled with each further failure up to ERROR_BACKOFF_CAP_MS (or this, if longer). */
  retryMs: number;
  logger: Pick<Logger, 'error' | 'warn' | 'info'>;
  /** Logged with the error when a step fails, at most once per ERROR_LOG_INTERVAL_MS. */
  errorMessage: string;
  /** Lets the process exit while the loop waits (housekeeping that must never hold a process open). */
  unref?: boolean;
  /** Runs when the loop is started (not when it is already running), before its first step. */
  onStart?: () => void;
}

export const ERROR_BACKOFF_CAP_MS = 10_000;
/** A failing loop (database down) would otherwise log every few milliseconds. */
export const ERROR_LOG_INTERVAL_MS = 60_000;

/**
 * Runs `step` until stopped, waiting between steps as long as each step asks. `wake()` ends a wait
 * early, and a wake that arrives while a step runs makes the wait after it end at once, so new work
 * is never left for a whole interval. A failing step is retried with a growing wait; its error is
 * logged with the number of failures since the last line. `stop()` ends the wait and resolves once
 * the step in flight has finished.
 */
export function backgroundLoop(options: LoopOptions): BackgroundLoop {
  const { step, logger } = options;
  let running: Promise<void> | undefined;
  let stopped = true;
  let wakeRequested = false;
  /** Ends the current wait: with `true` when the wait may be cut short by wake(). */
  let endWait: ((byWake: boolean) => void) | undefined;
  let failuresInARow = 0;
  let failuresUnlogged = 0;
  let lastLoggedAt = -Infinity;

  /** Resolves true when the wait ran its whole length. */
  const wait = (ms: number, wakeable: boolean) =>
    new Promise<boolean>((resolve) => {
      if (stopped || (wakeable && wakeRequested)) return resolve(false);
      const timer = setTimeout(() => finish(true), ms);
      if (options.unref) timer.unref();
      function finish(inFull: boolean) {
        clearTimeout(timer);
        endWait = undefined;
        resolve(inFull);
      }
      endWait = (byWake) => {
        if (!byWake || wakeable) finish(false);
      };
    });

  /** Whether a line was logged for the failures in a row so far (and so one is owed when they end). */
  let streakLogged = false;

  const reportFailure = (error: unknown) => {
    failuresInARow++;
    failuresUnlogged++;
    const now = Date.now();
    if (now - lastLoggedAt < ERROR_LOG_INTERVAL_MS) return;
    // The database out of reach (or refusing, or full) is an outage the loop waits out, not a fault of its own.
    const unavailable = databaseUnavailable(error);
    if (unavailable && !OPERATOR_CAUSES.has(unavailable.unavailableCause)) {
      logger.warn({ err: error, loop: options.name, cause: unavailable.unavailableCause, failures: failuresUnlogged }, `${options.errorMessage}: the database is unavailable; retrying`);
    } else {
      logger.error({ err: error, loop: options.name, failures: failuresUnlogged }, options.errorMessage);
    }
    lastLoggedAt = now;
    failuresUnlogged = 0;
    streakLogged = true;
  };

  const reportRecovery = () => {
    if (streakLogged) logger.info({ loop: options.name, failures: failuresInARow }, `${options.name}: running again after ${failuresInARow} failed turns`);
    streakLogged = false;
    failuresInARow = 0;
  };

  const loop = async () => {
    let waitedInFull = options.firstWaitMs ? await wait(options.firstWaitMs, true) : false;
    while (!stopped) {
      wakeRequested = false;
      let next: number;
      try {
        next = await step({ waitedInFull });
        if (failuresInARow > 0) reportRecovery();
      } catch (error) {
        reportFailure(error);
        const cap = Math.max(options.retryMs, ERROR_BACKOFF_CAP_MS);
        waitedInFull = await wait(Math.min(options.retryMs * 2 ** (failuresInARow - 1), cap), false);
        continue;
      }
      waitedInFull = next > 0 ? await wait(next, true) : false;
    }
  };

  return {
    name: options.name,
    start() {
      if (!stopped) return;
      options.onStart?.();
      stopped = false;
      running = loop();
    },
    async stop() {
      stopped = true;
      endWait?.(false);
      await running;
    },
    wake() {
      wakeRequested = true;
      endWait?.(true);
    },
  };
}

/** Runs `work` every `intervalMs` (first after one interval), never overlapping itself. */
export function intervalLoop(options: Omit<LoopOptions, 'step' | 'firstWaitMs' | 'retryMs' | 'unref'> & { intervalMs: number; work: () => Promise<unknown> }): BackgroundLoop {
  const { intervalMs, work, ...rest } = options;
  return backgroundLoop({
    ...rest,
    firstWaitMs: intervalMs,
    retryMs: intervalMs,
    unref: true,
    step: async () => {
      await work();
      return intervalMs;
    },
  });
}

/** While work was found within BUSY_WINDOW_MS, an empty poll waits only BUSY_POLL_MS before the next. */
export const BUSY_POLL_MS = 2;
export const BUSY_WINDOW_MS = 1000;

/**
 * The wait before the next poll of a queue: BUSY_POLL_MS for a second after work was last found
 * (work tends to come in streams, and each poll is one indexed query), then `idleMs`.
 */
export class PollPace {
  private lastWorkAt = 0;

  constructor(private readonly idleMs: number) {}

  workFound(): void {
    this.lastWorkAt = Date.now();
  }

  nextPollMs(): number {
    return Date.now() - this.lastWorkAt < BUSY_WINDOW_MS ? Math.min(BUSY_POLL_MS, this.idleMs) : this.idleMs;
  }
}
