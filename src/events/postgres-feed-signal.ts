import { sql } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import { quoteIdentifier, type Executor } from '../db/database.js';
import { FeedWatchers, type FeedSignal, type FeedWatch } from './feed-signal.js';

/** The NOTIFY channel on which dispatchers announce which organizations' feeds grew. */
const FEED_CHANNEL = 'wo_event_feed';
/** Organization ids per notification: a NOTIFY payload must stay under 8000 bytes. */
const ORGS_PER_NOTIFICATION = 100;
/** While the LISTEN connection is down, a watch looks again this often (notifications are being missed). */
const DISCONNECTED_RECHECK_MS = 1_000;
const RECONNECT_FIRST_MS = 100;
const RECONNECT_MAX_MS = 5_000;

/**
 * Announces, in the dispatching transaction, that these organizations' feeds grew: PostgreSQL delivers
 * the notification to every listening process when (and only if) the transaction commits. Sent by the
 * dispatcher rather than by every writing transaction, so a create's commit never waits on the
 * notification queue's lock. Several schemas may share a database: the payload names ours.
 */
export async function announceFeedGrowth(tx: Executor, orgIds: string[]): Promise<void> {
  const unique = [...new Set(orgIds)];
  for (let i = 0; i < unique.length; i += ORGS_PER_NOTIFICATION) {
    const orgs = unique.slice(i, i + ORGS_PER_NOTIFICATION).join(',');
    await sql`SELECT pg_notify(${FEED_CHANNEL}, current_schema() || ' ' || ${orgs})`.execute(tx);
  }
}

export interface PostgresFeedSignalOptions {
  url: string;
  /** The schema the service works in, when not the default one (its notifications are the ones we want). */
  schema?: string;
  logger: Pick<Logger, 'warn' | 'error'>;
}

/**
 * One dedicated LISTEN connection per process, opened when the first long-poll waits, fanning each
 * notification out to the watches of the organizations it names. A lost connection wakes every watch
 * (they may have missed notifications, so they read again), makes them look again every second
 * meanwhile, and is reopened with a growing delay; once it is back, every watch is woken once more.
 */
export class PostgresFeedSignal implements FeedSignal {
  private readonly watchers = new FeedWatchers(() => (this.listening ? undefined : DISCONNECTED_RECHECK_MS));
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private listening = false;
  /** `current_schema()` of our connection: the prefix of the notifications meant for us. */
  private schema: string | undefined;
  private reconnectDelayMs = RECONNECT_FIRST_MS;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: PostgresFeedSignalOptions) {}

  async watch(orgId: string): Promise<FeedWatch> {
    const watch = this.watchers.add(orgId);
    if (!this.listening && !this.closed) await this.connect();
    return watch;
  }

  wake(orgIds: Iterable<string>): void {
    this.watchers.wake(orgIds);
  }

  wakeAll(): void {
    this.watchers.wakeAll();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    this.watchers.wakeAll();
    await this.connecting;
    const client = this.client;
    this.client = undefined;
    this.listening = false;
    await client?.end().catch(() => {});
  }

  /** Opens the LISTEN connection; never rejects (a failure is logged, and retried while anyone watches). */
  private connect(): Promise<void> {
    this.connecting ??= this.open().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async open(): Promise<void> {
    const { url, schema } = this.options;
    const client = new pg.Client({
      connectionString: url,
      application_name: schema ? `wo-event-feed ${schema}` : 'wo-event-feed',
      connectionTimeoutMillis: 5_000,
      ...(schema ? { options: `-c search_path=${quoteIdentifier(schema)}` } : {}),
    });
    // @NOTE: without an 'error' listener, a connection the server drops would crash the process.
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, undefined));
    client.on('notification', (message) => this.deliver(message));
    try {
      await client.connect();
      const { rows } = await client.query<{ schema: string }>('SELECT current_schema() AS schema');
      this.schema = rows[0]?.schema;
      await client.query(`LISTEN ${FEED_CHANNEL}`);
    } catch (error) {
      client.removeAllListeners('end');
      await client.end().catch(() => {});
      this.options.logger.error({ err: error }, 'event feed: could not listen for new events; long-polls look again every second meanwhile');
      this.scheduleReconnect();
      return;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    const reconnected = this.reconnectDelayMs !== RECONNECT_FIRST_MS;
    this.client = client;
    this.listening = true;
    this.reconnectDelayMs = RECONNECT_FIRST_MS;
    // Whatever was announced while we were not listening is unknown: let every watch read again.
    if (reconnected) this.watchers.wakeAll();
  }

  private deliver(message: pg.Notification): void {
    if (message.channel !== FEED_CHANNEL || !message.payload) return;
    // Organization ids hold no space; a schema name may.
    const space = message.payload.lastIndexOf(' ');
    if (message.payload.slice(0, space) !== this.schema) return;
    this.watchers.wake(message.payload.slice(space + 1).split(','));
  }

  private lost(client: pg.Client, error: Error | undefined): void {
    if (client !== this.client) return;
    this.client = undefined;
    this.listening = false;
    client.removeAllListeners('end');
    void client.end().catch(() => {});
    if (this.closed) return;
    this.options.logger.warn({ err: error }, 'event feed: the LISTEN connection was lost; reconnecting');
    this.watchers.wakeAll();
    this.scheduleReconnect();
  }

  /** Reconnects after a growing delay, as long as someone watches (otherwise the next watch connects). */
  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer) return;
    const delay = this.reconnectDelayMs;
    this.reconnectDelayMs = Math.min(delay * 2, RECONNECT_MAX_MS);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (this.watchers.size > 0 && !this.listening) void this.connect();
    }, delay);
    this.reconnectTimer.unref();
  }
}
