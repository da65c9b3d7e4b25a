import type { Dispatcher } from 'undici';

/** What a receiver answered to one POST: its status, its `Retry-After`, and the start of its body. */
export interface ReceiverAnswer {
  statusCode: number;
  retryAfter: string | undefined;
  /** The first `readCapBytes` of the body as UTF-8 (cut to `excerptChars`, see storableText), or null for an empty body. */
  excerpt: string | null;
}

export interface PostOptions {
  headers: Record<string, string>;
  body: string;
  /** The whole exchange, from dispatch to the last byte read, must end within this. */
  timeoutMs: number;
  /** Bytes of the response body read at most; past them the connection is closed, not drained. */
  readCapBytes: number;
  excerptChars: number;
}

/** The deadline passed before the receiver answered (named as undici names its own time-outs). */
export class DeadlineError extends Error {
  override readonly name = 'TimeoutError';
}

/**
 * POSTs one webhook through undici's dispatcher interface, resolving with the receiver's answer or
 * rejecting with the network, time-out or URL-guard error.
 *
 * @NOTE: `undici.request` wraps this same call in a request handler, an AbortSignal, a Readable for
 * the response body and its events, all per send. Dispatching with our own handler costs markedly
 * less CPU per POST than `request` (bench/analysis.md, session 7), and a worker sends
 * thousands per second. Redirects are not followed (no interceptor): a 3xx is an answer like any other.
 */
export function postWebhook(dispatcher: Dispatcher, url: URL, options: PostOptions): Promise<ReceiverAnswer> {
  return new Promise((resolve, reject) => {
    let controller: Dispatcher.DispatchController | undefined;
    let settled = false;
    let statusCode = 0;
    let retryAfter: string | undefined;
    const chunks: Buffer[] = [];
    let size = 0;

    const finish = (error: Error | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      if (error) return reject(error);
      const excerpt = size === 0 ? null : storableText(Buffer.concat(chunks).toString('utf8').slice(0, options.excerptChars));
      resolve({ statusCode, retryAfter, excerpt });
    };
    // A timer cleared as soon as the exchange ends (an AbortSignal.timeout would stay armed, and
    // referenced, for the whole time-out: bench/analysis.md, "Memory (session 2)").
    const deadline = setTimeout(() => {
      const error = new DeadlineError(`no answer within ${options.timeoutMs} ms`);
      // Not started yet (still connecting): settle now; onRequestStart aborts it if it ever starts.
      finish(error);
      controller?.abort(error);
    }, options.timeoutMs);

    dispatcher.dispatch(
      { origin: url.origin, path: `${url.pathname}${url.search}`, method: 'POST', headers: options.headers, body: options.body },
      {
        onRequestStart(started) {
          controller = started;
          if (settled) started.abort(new DeadlineError(`no answer within ${options.timeoutMs} ms`));
        },
        onResponseStart(_controller, status, headers) {
          statusCode = status;
          const value = headers['retry-after'];
          retryAfter = Array.isArray(value) ? value[0] : value;
        },
        onResponseData(active, chunk) {
          if (settled) return;
          chunks.push(chunk.subarray(0, options.readCapBytes - size));
          size += chunk.length;
          if (size < options.readCapBytes) return;
          // Enough read: answer now and close the connection rather than drain the rest.
          finish(undefined);
          active.abort(new Error('response body read up to its cap'));
        },
        onResponseEnd() {
          finish(undefined);
        },
        onResponseError(_controller, error) {
          finish(error);
        },
      },
    );
  });
}

/**
 * The receiver's bytes as text both databases store: PostgreSQL refuses a NUL in text (the attempt's
 * record was lost with it), and the cut at `excerptChars` may split a surrogate pair. Either becomes
 * U+FFFD, as undecodable bytes already do.
 */
function storableText(text: string): string {
  return text.toWellFormed().replaceAll('\u0000', '\uFFFD');
}
