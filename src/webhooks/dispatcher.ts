import type { Db } from '../db/database.js';
import type { OutboxProgress, PendingEvent } from '../events/outbox-progress.js';
import { publishedPayloadJson } from '../events/outbox.js';
import type { WebhookDeliveriesTable } from './tables.js';
import type { Clock } from '../clock.js';
import { padInList } from '../db/statement-shapes.js';
import { preparedListQuery } from '../db/prepared.js';
import { insertRows } from '../db/insert-rows.js';
import { newDeliveryRow } from './repository.js';
import type { DeliveryHandoff } from './delivery-queue.js';

/**
 * Deliveries written per transaction, at most (one event's fan-out is never split). Without it, 500
 * events × 100 subscriptions built 50,000 rows in memory at once: that batch alone lifted the
 * worker's heap by tens of megabytes.
 */
const MAX_DELIVERIES_PER_BATCH = 2_000;

/**
 * Fans committed outbox events out into deliveries: one per active subscription that lists the
 * event. Events are read in `seq` order and, in the SAME transaction, given their feed positions, the
 * deliveries inserted and the events marked dispatched, so a crash at any point leaves all or none.
 * An event enters the event feed when this transaction commits.
 *
 * "Dispatched" is kept per dialect (see `OutboxProgress`): on SQLite a one-row cursor (the last
 * dispatched `seq`), on PostgreSQL a `dispatched_at` per event, read with `FOR UPDATE SKIP LOCKED`
 * so that any number of workers share the outbox.
 *
 * With a `handoff` (the delivery worker of this process), deliveries it has room for are written
 * already leased to it and handed over once the batch commits: the worker sends them without first
 * finding and leasing them in the table, which was a read and an UPDATE of every delivery row. A
 * lease is a lease however it was taken: if this process dies, those deliveries fall due when it
 * runs out, exactly like deliveries it had claimed.
 */
export class EventDispatcher {
  constructor(
    private readonly db: Db,
    /** How this database keeps what was dispatched (outbox-progress-sqlite.ts, outbox-progress-postgres.ts). */
    private readonly progress: OutboxProgress,
    private readonly clock: Clock,
    private readonly batchSize = 500,
    /** Called once a batch has committed, with the organization of each event dispatched (wakes the feed's long-polls). */
    private readonly onDispatched?: (orgIds: string[]) => void,
    private readonly handoff?: DeliveryHandoff,
  ) {
    this.eventsPerBatch = batchSize;
  }

  /** Events read per batch: fewer when the last batch fanned out widely (see MAX_DELIVERIES_PER_BATCH). */
  private eventsPerBatch: number;

  /**
   * Dispatches one batch; resolves to the number of outbox events handled (0 when none waited), of
   * deliveries written, of those written as `pending` (not handed to the worker: it must look for
   * them), and whether the batch was full (more are likely waiting).
   */
  async dispatchBatch(): Promise<{ events: number; deliveries: number; pending: number; full: boolean }> {
    // An idle poll (20 a second by default) is then a read, not a write transaction: on SQLite it
    // would open a write group that every read of that event-loop turn then waited on.
    if (!(await this.progress.hasPending(this.db))) return { events: 0, deliveries: 0, pending: 0, full: false };
    // Slots taken from the worker for deliveries written leased to it; given back if the batch fails.
    const slotsTaken: string[] = [];
    const handedOver: WebhookDeliveriesTable[] = [];
    let lease: string | undefined;
    const batch = this.db.transaction().execute(async (tx) => {
      const limit = this.eventsPerBatch;
      const events = await this.progress.next(tx, limit);
      if (events.length === 0) return { events: 0, deliveries: 0, full: false, orgIds: [] };

      const orgIds = [...new Set(events.map((event) => event.org_id))];
      const { rows: subscriptions } = await activeSubscriptionsQuery(tx, {}, orgIds);
      const byOrg = new Map<string, { id: string; org_id: string; events: Set<string> }[]>();
      for (const sub of subscriptions) {
        const list = byOrg.get(sub.org_id) ?? [];
        list.push({ id: sub.id, org_id: sub.org_id, events: new Set(JSON.parse(sub.events) as string[]) });
        byOrg.set(sub.org_id, list);
      }
      const matchingOf = (event: PendingEvent) => (byOrg.get(event.org_id) ?? []).filter((sub) => sub.events.has(event.type));

      // On PostgreSQL the subscriptions were read in a later snapshot than the events: one created in
      // between may want an event whose payload was left unread. Read those now rather than skip them.
      const unread = events.filter((event) => event.payload === null && byOrg.has(event.org_id) && matchingOf(event).length > 0);
      if (unread.length > 0) {
        const payloads = await tx
          .selectFrom('outbox_events')
          .select(['seq', 'payload'])
          .where('seq', 'in', padInList(unread.map((event) => event.seq)))
          .execute();
        const bySeq = new Map(payloads.map((row) => [Number(row.seq), row.payload]));
        for (const event of unread) event.payload = bySeq.get(Number(event.seq)) ?? null;
      }

      // The rest of the events stay in the outbox for the next batch, in order.
      const wanted = events.map((event) => (event.payload === null ? [] : matchingOf(event)));
      let taken = 0;
      let planned = 0;
      while (taken < events.length && planned < MAX_DELIVERIES_PER_BATCH) planned += wanted[taken++]!.length;
      const dispatched = events.slice(0, taken);
      const positions = await this.progress.positions(tx, dispatched);

      const nowDate = this.clock.now();
      const now = nowDate.toISOString();
      lease = this.handoff?.leaseForNew(nowDate);
      const deliveries: WebhookDeliveriesTable[] = [];
      dispatched.forEach((event, i) => {
        if (wanted[i]!.length === 0) return;
        const body = deliveryEnvelope(event.type, event.payload!, positions[i]!, event.created_at);
        for (const sub of wanted[i]!) {
          const row = newDeliveryRow(sub, { eventId: event.id, eventType: event.type, body, now });
          if (lease && this.handoff!.take(sub.id)) {
            slotsTaken.push(sub.id);
            // What a claim would have written (see leaseDeliveries): due again only when the lease runs out.
            Object.assign(row, { status: 'delivering', locked_until: lease, next_attempt_at: lease });
            handedOver.push(row);
          }
          deliveries.push(row);
        }
      });
      const fanOut = deliveries.length / taken;
      this.eventsPerBatch = Math.max(1, Math.min(this.batchSize, Math.floor(MAX_DELIVERIES_PER_BATCH / Math.max(1, fanOut))));
      await insertRows(tx, 'webhook_deliveries', deliveries);
      await this.progress.markDispatched(tx, dispatched, positions, now);
      return { events: dispatched.length, deliveries: deliveries.length, full: events.length === limit || dispatched.length < events.length, orgIds: dispatched.map((event) => event.org_id) };
    });
    let result: Awaited<typeof batch>;
    try {
      result = await batch;
    } catch (error) {
      if (slotsTaken.length > 0) this.handoff!.giveBack(slotsTaken);
      throw error;
    }
    // Committed: the events are in the feed now, and the leased deliveries the worker's.
    if (handedOver.length > 0) this.handoff!.adopt(handedOver, lease!);
    if (result.orgIds.length > 0) this.onDispatched?.(result.orgIds);
    return { events: result.events, deliveries: result.deliveries, pending: result.deliveries - handedOver.length, full: result.full };
  }
}

/**
 * The body every attempt of a delivery sends, byte for byte: `{event, payload, timestamp}`, where
 * `payload` is the event's published payload (see publishedPayloadJson), the same bytes as in the feed.
 */
export function deliveryEnvelope(type: string, payloadJson: string, sequence: number, occurredAt: string): string {
  return `{"event":${JSON.stringify(type)},"payload":${publishedPayloadJson(payloadJson, sequence)},"timestamp":${JSON.stringify(occurredAt)}}`;
}

/** The active subscriptions of the organizations in a batch: read for every batch, so compiled once per list length. */
const activeSubscriptionsQuery = preparedListQuery((tx, _p: object, orgIds: string[]) =>
  tx.selectFrom('webhook_subscriptions').select(['id', 'org_id', 'events']).where('org_id', 'in', orgIds).where('active', '=', 1),
);
