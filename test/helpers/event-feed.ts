import { outboxProgressOf } from './outbox.js';
import assert from 'node:assert/strict';
import type { Gauge } from 'prom-client';
import { EventDispatcher } from '../../src/webhooks/dispatcher.js';
import { systemClock } from '../../src/clock.js';
import type { AppContext } from '../../src/context.js';
import type { Tenant } from './test-app.js';

export interface FeedPage {
  events: { id: string; type: string; sequence: number; occurredAt: string; payload: Record<string, unknown> }[];
  total: number;
  limit: number;
  offset: number;
}

/** GET /api/v1/events with `query`, expecting 200. */
export async function readFeed(tenant: Tenant, query = ''): Promise<FeedPage> {
  const response = await tenant.request({ method: 'GET', url: `/api/v1/events${query ? `?${query}` : ''}` });
  assert.equal(response.statusCode, 200, response.body);
  return response.json() as FeedPage;
}

/** Dispatches everything the outbox holds (as the worker's dispatcher would), so that it enters the feed. */
export async function dispatchAll(context: AppContext): Promise<void> {
  const dispatcher = new EventDispatcher(context.database.db, outboxProgressOf(context.database), systemClock);
  while ((await dispatcher.dispatchBatch()).events > 0);
}

/** How many feed requests wait for an event right now (the process's own gauge). */
export async function waitingFeedRequests(context: AppContext): Promise<number> {
  const gauge = context.metrics.getSingleMetric('wo_event_feed_waiting_requests') as Gauge | undefined;
  return (await gauge?.get())?.values[0]?.value ?? 0;
}
