import { Gauge, type Registry } from 'prom-client';
import type { Db } from '../db/database.js';
import type { Page } from '../db/page.js';
import { errors } from '../errors.js';
import type { EventNames } from './catalogue.js';
import type { FeedSignal } from './feed-signal.js';
import { feedPages, searchFeed, type FeedOrder, type FeedQuery, type FeedSearch } from './feed-repository.js';
import { publishedPayloadJson } from './outbox.js';
import type { EventListQuery } from './schemas.js';

export type FeedFilter = Omit<EventListQuery, 'limit' | 'offset'>;
export type { FeedSearch } from './feed-repository.js';

/** An event of the feed as the admin area shows it: the payload as the JSON text deliveries carry. */
export interface FoundEvent {
  id: string;
  type: string;
  sequence: number;
  occurredAt: string;
  payloadJson: string;
}

/**
 * The event feed: an organization's dispatched events, oldest first, with the payload and id their
 * webhook deliveries carry. A request with `wait` whose page is empty waits for the feed to grow
 * (FeedSignal), reading again on each wake, until something matches or the wait is over.
 */
export class EventFeed {
  private closing = false;
  private readonly waiting: Gauge;
  private readonly readPage: ReturnType<typeof feedPages>;

  constructor(
    private readonly db: Db,
    /** Where events sit in the feed on this database (OutboxProgress.feed). */
    private readonly order: FeedOrder,
    private readonly signal: FeedSignal,
    metrics: Registry,
    /** The names the `type` filter accepts. */
    private readonly eventNames: EventNames,
  ) {
    this.readPage = feedPages(order);
    this.waiting = new Gauge({
      name: 'wo_event_feed_waiting_requests',
      help: 'Requests to GET /api/v1/events waiting for a matching event (long-poll)',
      registers: [metrics],
    });
  }

  /**
   * One page of the feed, each event as JSON text (a FeedEvent): the payload is the stored text with
   * its `sequence`, the bytes its webhook deliveries carry, never parsed. `abort` ends a wait early
   * (the client went away).
   */
  async listAsJson(orgId: string, filter: FeedFilter, page: Page, abort?: AbortSignal): Promise<{ eventsJson: string[]; total: number }> {
    const query: FeedQuery = { orgId, types: parseTypes(filter.type, this.eventNames), after: filter.after ?? 0 };
    if (filter.wait === undefined || this.closing) return this.read(query, page);

    const deadline = Date.now() + filter.wait * 1000;
    // Watch first, read second: growth committed in between still wakes the watch.
    const watch = await this.signal.watch(orgId);
    try {
      for (;;) {
        const found = await this.read(query, page);
        const left = deadline - Date.now();
        if (found.eventsJson.length > 0 || left <= 0 || this.closing || abort?.aborted) return found;
        this.waiting.inc();
        try {
          await watch.changed(left, abort);
        } finally {
          this.waiting.dec();
        }
      }
    } finally {
      watch.stop();
    }
  }

  /**
   * One page of an organization's feed, newest first, narrowed by type, id and time (the admin area's
   * event log). Each payload is the JSON text its webhook deliveries carry, with its `sequence`.
   */
  async search(search: FeedSearch, page: Page): Promise<{ events: FoundEvent[]; total: number }> {
    if (search.type !== undefined && !this.eventNames.has(search.type)) throw errors.validation([{ field: 'type', message: 'is not an event name' }]);
    const { rows, total } = await searchFeed(this.db, this.order, search, page);
    return {
      events: rows.map((row) => ({ id: row.id, type: row.type, sequence: row.position, occurredAt: row.created_at, payloadJson: publishedPayloadJson(row.payload, row.position) })),
      total,
    };
  }

  /** Shutdown: waiting requests answer what they have now, and later ones do not wait. */
  stopWaiting(): void {
    this.closing = true;
    this.signal.wakeAll();
  }

  private async read(query: FeedQuery, page: Page): Promise<{ eventsJson: string[]; total: number }> {
    const { rows, total } = await this.readPage(this.db, query, page);
    // Key for key what the response serializer would write from a FeedEvent.
    const eventsJson = rows.map(
      (row) =>
        `{"id":${JSON.stringify(row.id)},"type":${JSON.stringify(row.type)},"sequence":${row.position},"occurredAt":${JSON.stringify(row.created_at)},"payload":${publishedPayloadJson(row.payload, row.position)}}`,
    );
    return { eventsJson, total };
  }
}

/** The `type` filter: comma-separated catalogue names (spaces around them allowed); undefined for all. */
function parseTypes(raw: string | undefined, eventNames: EventNames): string[] | undefined {
  if (raw === undefined) return undefined;
  const names = raw.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !eventNames.has(name));
  if (unknown.length > 0) {
    const shown = unknown.map((name) => (name === '' ? 'an empty name' : `"${name.slice(0, 60)}"`)).join(', ');
    throw errors.validation([{ field: 'querystring.type', message: `${shown} is not an event name; known events: ${eventNames.types.join(', ')}` }]);
  }
  return [...new Set(names)];
}
