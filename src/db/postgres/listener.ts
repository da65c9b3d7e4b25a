import { sql } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Executor } from '../database.js';
import { quoteIdentifier } from './open-postgres.js';
import { LogThrottle } from '../../log-throttle.js';

const RECONNECT_FIRST_MS = 100;
const RECONNECT_MAX_MS = 5_000;

/**
 * Sends `message` on `channel` to every process that listens there on this schema (PostgresListener),
 * when (and only if) the transaction of `executor` commits. Several schemas may share a database: the
 * payload names ours.
 */
export async function notifyListeners(executor: Executor, channel: string, message: string): Promise<void> {
  await sql`SELECT pg_notify(${channel}, current_schema() || ' ' || ${message})`.execute(executor);
}

export interface PostgresListenerOptions {
  url: string;
  /** The schema the service works in, when not the default one (its notifications are the ones we want). */
  schema?: string;
  channel: string;
  /** Names the connection in pg_stat_activity. */
  applicationName: string;
  /** What the logs call it ("event feed: …"). */
  purpose: string;
  logger: Pick<Logger, 'warn'>;
  /** A message sent on the channel for our schema (notifyListeners). */
  onMessage(message: string): void;
  /** Listening again after the connection was down: whatever was sent meanwhile was missed. */
  onReconnected?(): void;
  /** The connection was lost: messages are being missed until onReconnected. */
  onLost?(): void;
  /** Whether to reconnect after a loss; when false, the next `connect()` does. Default: always. */
  stayConnected?(): boolean;
}

/**
 * One dedicated LISTEN connection of a process on one channel. A lost connection is reported and
 * reopened with a growing delay (as long as `stayConnected`); `listening` says whether messages can be
 * missed right now.
 */
export class PostgresListener {
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private listeningNow = false;
  /** `current_schema()` of our connection: the prefix of the messages meant for us. */
  private schema: string | undefined;
  private reconnectDelayMs = RECONNECT_FIRST_MS;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** A database out of reach fails every attempt alike: one line per interval says so. */
  private readonly logThrottle = new LogThrottle();

  constructor(private readonly options: PostgresListenerOptions) {}

  get listening(): boolean {
    return this.listeningNow;
  }

  /**
   * Opens the LISTEN connection; never rejects (a failure is logged, and retried). While a retry is
   * scheduled it waits for it: an outage is not tried once per caller.
   */
  connect(): Promise<void> {
    if (this.listeningNow || this.closed || this.reconnectTimer) return Promise.resolve();
    this.connecting ??= this.open().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    await this.connecting;
    const client = this.client;
    this.client = undefined;
    this.listeningNow = false;
    await client?.end().catch(() => {});
  }

  private async open(): Promise<void> {
    const { url, schema, channel, applicationName } = this.options;
    const client = new pg.Client({
      connectionString: url,
      application_name: schema ? `${applicationName} ${schema}` : applicationName,
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
      await client.query(`LISTEN ${channel}`);
    } catch (error) {
      client.removeAllListeners('end');
      await client.end().catch(() => {});
      const admitted = this.logThrottle.admit('connect');
      if (admitted) this.options.logger.warn({ err: error, suppressed: admitted.suppressed }, `${this.options.purpose}: could not listen on PostgreSQL; retrying`);
      this.scheduleReconnect();
      return;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    const reconnected = this.reconnectDelayMs !== RECONNECT_FIRST_MS;
    this.client = client;
    this.listeningNow = true;
    this.reconnectDelayMs = RECONNECT_FIRST_MS;
    if (reconnected) this.options.onReconnected?.();
  }

  private deliver(message: pg.Notification): void {
    if (message.channel !== this.options.channel || !message.payload) return;
    // What follows the schema holds no space; a schema name may.
    const space = message.payload.lastIndexOf(' ');
    if (message.payload.slice(0, space) !== this.schema) return;
    this.options.onMessage(message.payload.slice(space + 1));
  }

  private lost(client: pg.Client, error: Error | undefined): void {
    if (client !== this.client) return;
    this.client = undefined;
    this.listeningNow = false;
    client.removeAllListeners('end');
    void client.end().catch(() => {});
    if (this.closed) return;
    const admitted = this.logThrottle.admit('lost');
    if (admitted) this.options.logger.warn({ err: error, suppressed: admitted.suppressed }, `${this.options.purpose}: the LISTEN connection was lost; reconnecting`);
    this.options.onLost?.();
    this.scheduleReconnect();
  }

  /** Reconnects after a growing delay, while wanted (otherwise the next `connect()` does). */
  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer) return;
    const delay = this.reconnectDelayMs;
    this.reconnectDelayMs = Math.min(delay * 2, RECONNECT_MAX_MS);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (this.options.stayConnected?.() ?? true) void this.connect();
    }, delay);
    this.reconnectTimer.unref();
  }
}
