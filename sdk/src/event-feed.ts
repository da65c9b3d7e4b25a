import type { ListItem, OperationResult, WebhookEventName } from './operation-types.js';
import { ProblemError, UnexpectedResponseError } from './problem-error.js';

/** An event of the feed: `{id, type, sequence, occurredAt, payload}`. */
export type FeedEvent = ListItem<'listEvents'>;

export interface FollowOptions {
  /** Start after this `sequence` (the last one you processed); from the oldest event kept when left out. */
  after?: number;
  /** Only these events. */
  types?: Array<Exclude<WebhookEventName, 'webhook.ping'>>;
  /** Seconds each request waits for a new event before answering an empty page (1–30, default 30). */
  wait?: number;
  /** Events per page (1–100, default 100). */
  limit?: number;
  /** Stops following; the loop then ends without an error. */
  signal?: AbortSignal;
}

export interface EventFeed {
  /**
   * Every event after `after`, oldest first, then each new one as it enters the feed (long-polling
   * with `wait`), forever or until `signal` aborts or the loop breaks. Outages (network errors, 429,
   * 5xx) are waited out with backoff; other problems (a refused key) are thrown.
   */
  follow(options?: FollowOptions): AsyncGenerator<FeedEvent, void, undefined>;
}

type ListEvents = (input: { query: Record<string, unknown>; signal: AbortSignal }) => Promise<OperationResult<'listEvents'>>;

const MAX_PAUSE_MS = 30_000;

export async function* followEvents(listEvents: ListEvents, options: FollowOptions = {}): AsyncGenerator<FeedEvent, void, undefined> {
  const wait = options.wait ?? 30;
  let after = options.after;
  let pause = 500;
  while (!options.signal?.aborted) {
    // A request the network silently dropped must not hang the follower: give it the wait plus slack.
    const timeout = AbortSignal.timeout((wait + 15) * 1000);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    let page: OperationResult<'listEvents'>;
    try {
      const query = { limit: options.limit ?? 100, wait, ...(after === undefined ? {} : { after }), ...(options.types ? { type: options.types.join(',') } : {}) };
      page = await listEvents({ query, signal });
    } catch (error) {
      if (options.signal?.aborted) return;
      if (!isTransient(error)) throw error;
      await pauseFor(pause, options.signal);
      pause = Math.min(pause * 2, MAX_PAUSE_MS);
      continue;
    }
    pause = 500;
    for (const event of page.events) {
      yield event;
      after = event.sequence;
    }
  }
}

function isTransient(error: unknown): boolean {
  if (error instanceof ProblemError || error instanceof UnexpectedResponseError) {
    const status = error.response.status;
    return status === 429 || status >= 500;
  }
  // fetch's network failures, and our own time-out of a dropped request.
  return error instanceof TypeError || (error instanceof DOMException && (error.name === 'TimeoutError' || error.name === 'AbortError'));
}

function pauseFor(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
