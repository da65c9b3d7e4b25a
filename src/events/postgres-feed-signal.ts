import type { Logger } from 'pino';
import type { Executor } from '../db/database.js';
import { notifyListeners, PostgresListener } from '../db/postgres/listener.js';
import { FeedWatchers, type FeedSignal, type FeedWatch } from './feed-signal.js';

/** The NOTIFY channel on which dispatchers announce which organizations' feeds grew. */
const FEED_CHANNEL = 'wo_event_feed';
/** Organization ids per notification: a NOTIFY payload must stay under 8000 bytes. */
const ORGS_PER_NOTIFICATION = 100;
/** While the LISTEN connection is down, a watch looks again this often (notifications are being missed). */
const DISCONNECTED_RECHECK_MS = 1_000;

/**
 * Announces, in the dispatching transaction, that these organizations' feeds grew: PostgreSQL delivers
 * the notification to every listening process when (and only if) the transaction commits. Sent by the
 * dispatcher rather than by every writing transaction, so a create's commit never waits on the
 * notification queue's lock.
 */
export async function announceFeedGrowth(tx: Executor, orgIds: string[]): Promise<void> {
  const unique = [...new Set(orgIds)];
  for (let i = 0; i < unique.length; i += ORGS_PER_NOTIFICATION) {
    await notifyListeners(tx, FEED_CHANNEL, unique.slice(i, i + ORGS_PER_NOTIFICATION).join(','));
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
 * meanwhile, and is reopened with a growing delay while anyone watches; once it is back, every watch
 * is woken once more.
 */
export class PostgresFeedSignal implements FeedSignal {
  private readonly watchers = new FeedWatchers(() => (this.listener.listening ? undefined : DISCONNECTED_RECHECK_MS));
  private readonly listener: PostgresListener;
  private closed = false;

  constructor(options: PostgresFeedSignalOptions) {
    this.listener = new PostgresListener({
      ...options,
      channel: FEED_CHANNEL,
      applicationName: 'wo-event-feed',
      purpose: 'event feed',
      onMessage: (orgs) => this.watchers.wake(orgs.split(',')),
      onLost: () => this.watchers.wakeAll(),
      onReconnected: () => this.watchers.wakeAll(),
      stayConnected: () => this.watchers.size > 0,
    });
  }

  async watch(orgId: string): Promise<FeedWatch> {
    const watch = this.watchers.add(orgId);
    if (!this.closed) await this.listener.connect();
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
    this.watchers.wakeAll();
    await this.listener.close();
  }
}
