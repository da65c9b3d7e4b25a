import { isRetryable, retryDelay, retryPolicy, type RetryOptions } from './retry-policy.js';

type Fetch = (request: Request) => Promise<Response>;

/**
 * A fetch that sends a request again after a retryable failure (see retry-policy.ts). Each attempt
 * sends a copy of the same request, headers included, so a POST's Idempotency-Key is the same on
 * every attempt and the service runs it at most once.
 */
export function createRetryingFetch(baseFetch: Fetch, options?: RetryOptions): Fetch {
  const policy = retryPolicy(options);
  return async (request) => {
    for (let attempt = 1; ; attempt++) {
      let response: Response | undefined;
      let failure: unknown;
      try {
        response = await baseFetch(request.clone());
      } catch (error) {
        if (request.signal.aborted) throw error;
        failure = error;
      }
      const lastAttempt = attempt >= policy.maxAttempts;
      if (lastAttempt || !isRetryable(request.method, response?.status, await problemCodeOf(response))) {
        if (response) return response;
        throw failure;
      }
      const delay = retryDelay(policy, attempt, response?.headers.get('retry-after') ?? null);
      if (delay > policy.maxDelayMs) {
        if (response) return response;
        throw failure;
      }
      await response?.body?.cancel();
      await sleep(delay, request.signal);
    }
  };
}

/** The problem code of a 409, the one status whose retry depends on it. */
async function problemCodeOf(response: Response | undefined): Promise<string | undefined> {
  if (response?.status !== 409) return undefined;
  try {
    return ((await response.clone().json()) as { code?: string }).code;
  } catch {
    return undefined;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
