import { setTimeout as sleep } from 'node:timers/promises';
import { generateWebhookSecret } from '../webhooks/secret-box.js';
import { deliveryHeaders } from '../webhooks/send-delivery.js';
import { standardWebhookKey } from '../webhooks/signature.js';
import { classifyStatus } from '../webhooks/retry-policy.js';
import { parseOptions, UsageError, type CliCommand, type CliIo } from './command.js';

/** One event as the feed (`GET /api/v1/events`) answers it. */
interface FeedEvent {
  id: string;
  type: string;
  sequence: number;
  occurredAt: string;
  payload: Record<string, unknown>;
}

/** Attempts per event at the local URL, and the wait after each failed one. */
const ATTEMPTS = 3;
const RETRY_WAIT_MS = [1_000, 3_000];
/** What a local receiver has to answer one POST, as a real delivery's default (WO_WEBHOOK_TIMEOUT_MS). */
const POST_TIMEOUT_MS = 10_000;
const FEED_WAIT_SECONDS = 30;
const SECRET_FORM = /^whsec_[A-Za-z0-9+/]{43}=$/;

export const listenCommand: CliCommand = {
  path: ['listen'],
  usage: 'listen --forward-to <url> [--events a,b] [--from now|beginning] [--api-url <url>] [--api-key <key>] [--secret whsec_…]',
  summary: 'Follow the event feed and POST each event to a local URL, signed as a webhook delivery is (development; no subscription needed).',
  details: () =>
    [
      'options:',
      '  --forward-to <url>   where each event is POSTed (http://localhost:3000/webhooks); any address, loopback included',
      '  --events a,b         only these events (names from the catalogue; the feed refuses unknown ones)',
      '  --from now           only events recorded from now on (the default); `beginning`: every event the feed still holds first',
      '  --api-url <url>      the service (default WO_PUBLIC_URL, else http://127.0.0.1:$PORT, PORT 8080 unless set)',
      '  --api-key <key>      an API key with the events:read scope (default WO_API_KEY)',
      '  --secret whsec_…     sign with this secret instead of a new one (keep one across runs)',
      '',
      'Each event is signed with the printed secret exactly as a delivery is (X-Webhook-Signature and the',
      'Standard Webhooks headers, body {event, payload, timestamp}); a failed POST is tried 3 times in all,',
      'then reported and skipped. Ctrl-C stops at once.',
    ].join('\n'),
  async run(args, config, io) {
    const { values } = parseOptions(
      args,
      {
        'forward-to': { type: 'string' },
        events: { type: 'string' },
        from: { type: 'string', default: 'now' },
        'api-url': { type: 'string' },
        'api-key': { type: 'string' },
        secret: { type: 'string' },
      },
      false,
    );
    const target = parseUrl(values['forward-to'], '--forward-to');
    const api = parseUrl(values['api-url'] ?? config.publicUrl, '--api-url');
    const apiKey = values['api-key'] ?? config.client.apiKey;
    if (!apiKey) throw new UsageError('pass --api-key or set WO_API_KEY (a key with the events:read scope)');
    if (values.from !== 'now' && values.from !== 'beginning') throw new UsageError('--from must be `now` or `beginning`');
    if (values.secret !== undefined && !SECRET_FORM.test(values.secret)) throw new UsageError('--secret must be a whsec_… secret as subscriptions and `wo listen` print it');
    const types = values.events?.split(',').map((name) => name.trim()).join(',');

    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    try {
      const feed = new FeedReader(api, apiKey, types, stop.signal);
      let after = values.from === 'now' ? await feed.latestSequence(io) : 0;
      const secret = values.secret ?? generateWebhookSecret();
      const keys = { secret, standardKey: standardWebhookKey(secret) };
      io.out(`Forwarding ${types ? `the ${types.replaceAll(',', ', ')}` : 'all'} events of ${api.origin} to ${target.href}`);
      io.out(`Signing secret: ${secret}`);
      io.out(values.from === 'now' ? 'Waiting for new events (Ctrl-C to stop)…' : 'Forwarding the events the feed holds, then waiting for new ones (Ctrl-C to stop)…');
      for (;;) {
        const events = await feed.next(after, io);
        for (const event of events) {
          await forward(target, event, keys, io, stop.signal);
          after = event.sequence;
        }
      }
    } catch (error) {
      if (stop.signal.aborted) return 130;
      if (error instanceof FeedRefused) {
        io.err(`wo listen: ${error.message}`);
        return error.status === 401 || error.status === 403 ? 1 : 2;
      }
      throw error;
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  },
};

function parseUrl(raw: string | undefined, option: string): URL {
  if (!raw) throw new UsageError(`${option} is required`);
  try {
    const url = new URL(raw);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url;
  } catch {
    // Reported below.
  }
  throw new UsageError(`${option} must be an absolute http:// or https:// URL, got "${raw}"`);
}

/** The feed answered with an error no retry mends (a refused key, unknown event names). */
class FeedRefused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Long-polls the event feed with one key, backing off while the service is out of reach. */
class FeedReader {
  private unreachableSince: number | undefined;

  constructor(
    private readonly api: URL,
    private readonly apiKey: string,
    private readonly types: string | undefined,
    private readonly signal: AbortSignal,
  ) {}

  /**
   * The sequence of the newest event (of the chosen types) now in the feed, 0 when it holds none;
   * a service not started yet is waited for, as the feed is later.
   */
  latestSequence(io: CliIo): Promise<number> {
    return this.retrying(io, async () => {
      const { total } = await this.page({ limit: '1' });
      if (total === 0) return 0;
      const { events } = await this.page({ limit: '1', offset: String(total - 1) });
      return events.at(-1)?.sequence ?? 0;
    });
  }

  /** The next page after `after`, waiting for one. */
  next(after: number, io: CliIo): Promise<FeedEvent[]> {
    return this.retrying(io, async () => (await this.page({ after: String(after), limit: '100', wait: String(FEED_WAIT_SECONDS) })).events);
  }

  /** `read` until it answers: network trouble, 429 and 5xx are reported once, with where it reads, and retried. */
  private async retrying<T>(io: CliIo, read: () => Promise<T>): Promise<T> {
    for (let pause = 1_000; ; pause = Math.min(pause * 2, 30_000)) {
      try {
        const answer = await read();
        if (this.unreachableSince !== undefined) io.err('wo listen: the event feed answers again');
        this.unreachableSince = undefined;
        return answer;
      } catch (error) {
        if (error instanceof FeedRefused || this.signal.aborted) throw error;
        if (this.unreachableSince === undefined) {
          io.err(`wo listen: cannot read the event feed at ${this.api.origin} (${describeFailure(error)}); trying again. Is the service running there? Otherwise pass --api-url (or set WO_PUBLIC_URL or PORT as the service has them).`);
        }
        this.unreachableSince ??= Date.now();
        await sleep(pause, undefined, { signal: this.signal });
      }
    }
  }

  private async page(query: Record<string, string>): Promise<{ events: FeedEvent[]; total: number }> {
    const url = new URL('/api/v1/events', this.api);
    for (const [name, value] of Object.entries({ ...query, ...(this.types ? { type: this.types } : {}) })) url.searchParams.set(name, value);
    const response = await fetch(url, {
      headers: { authorization: `Bearer ${this.apiKey}`, accept: 'application/json' },
      signal: AbortSignal.any([this.signal, AbortSignal.timeout((FEED_WAIT_SECONDS + 15) * 1000)]),
    });
    if (response.ok) return (await response.json()) as { events: FeedEvent[]; total: number };
    const text = await response.text();
    if (response.status === 429 || response.status >= 500) throw new Error(`HTTP ${response.status}`);
    throw new FeedRefused(response.status, describeProblem(response.status, text));
  }
}

function describeProblem(status: number, text: string): string {
  let problem: { detail?: string; errors?: { field: string; message: string }[] } = {};
  try {
    problem = JSON.parse(text) as typeof problem;
  } catch {
    // Not problem+json: the status says enough.
  }
  const reasons = problem.errors?.map((e) => `\n  ${e.field}: ${e.message}`).join('') ?? '';
  const hint = status === 401 || status === 403 ? ' (the key needs the events:read scope)' : '';
  return `the event feed answered ${status}: ${problem.detail ?? text.slice(0, 200)}${reasons}${hint}`;
}

/**
 * The body a delivery of `event` carries, `{event, payload, timestamp}`: the feed's payload already
 * holds `sequence`, as a delivery's does (see deliveryEnvelope).
 */
function deliveryBody(event: FeedEvent): string {
  return `{"event":${JSON.stringify(event.type)},"payload":${JSON.stringify(event.payload)},"timestamp":${JSON.stringify(event.occurredAt)}}`;
}

/** POSTs one event, signed afresh for each attempt as the delivery worker signs, and prints how it went. */
async function forward(target: URL, event: FeedEvent, keys: { secret: string; standardKey: Buffer }, io: CliIo, signal: AbortSignal): Promise<void> {
  const body = deliveryBody(event);
  let outcome = '';
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const started = performance.now();
    let retryable: boolean;
    try {
      const headers = deliveryHeaders({ event_type: event.type, event_id: event.id, body }, keys, new Date());
      const response = await fetch(target, {
        method: 'POST',
        headers,
        body,
        redirect: 'manual',
        signal: AbortSignal.any([signal, AbortSignal.timeout(POST_TIMEOUT_MS)]),
      });
      await response.body?.cancel();
      const ms = Math.round(performance.now() - started);
      const kind = classifyStatus(response.status).kind;
      outcome = `${response.status} ${ms} ms`;
      if (kind === 'success') {
        io.out(`→ ${event.type} ${event.id} ${outcome}`);
        return;
      }
      retryable = kind === 'retryable';
    } catch (error) {
      if (signal.aborted) throw error;
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      outcome = (error as Error).name === 'TimeoutError' ? `no answer within ${POST_TIMEOUT_MS} ms` : `network error ${cause?.code ?? cause?.message ?? (error as Error).message}`;
      retryable = true;
    }
    if (!retryable || attempt === ATTEMPTS) break;
    io.err(`  ${event.type} ${event.id}: ${outcome}, trying again`);
    await sleep(RETRY_WAIT_MS[attempt - 1] ?? 1_000, undefined, { signal });
  }
  io.out(`✗ ${event.type} ${event.id} ${outcome} (not forwarded; going on)`);
}

/** fetch's "fetch failed" names nothing: its cause does (ECONNREFUSED, ENOTFOUND…). */
function describeFailure(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}
