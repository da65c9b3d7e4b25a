import { defineFeature } from '../feature.js';
import { byDialect } from '../db/database.js';
import { EventFeed } from './feed.js';
import { postgresOutboxProgress } from './outbox-progress-postgres.js';
import { sqliteOutboxProgress } from './outbox-progress-sqlite.js';
import { eventRoutes } from './routes.js';
import { eventComponents } from './schemas.js';
import { eventExamples } from './examples.js';

declare module '../feature.js' {
  interface FeatureServices {
    events: EventFeed;
  }
}
declare module '../keys/scopes.js' {
  interface ScopeCatalogue extends Record<keyof typeof EVENT_FEED_SCOPES, string> {}
}

const EVENT_FEED_SCOPES = {
  'events:read': 'Read the event feed: every event webhooks deliver, to catch up or follow changes without receiving webhooks.',
} as const;

/** The event feed: every event of the outbox, in order, to catch up or follow without webhooks. */
export const eventFeedFeature = defineFeature({
  name: 'events',
  tags: [{ name: 'Events', description: 'The event feed: every event webhooks deliver, to catch up or to follow without receiving webhooks. See docs/events.md.' }],
  scopes: EVENT_FEED_SCOPES,
  schemas: (registry) => eventComponents(registry.eventTypes),
  examples: eventExamples,
  build({ database, apiMetrics, registry, services }) {
    const outbox = byDialect(database, { sqlite: () => sqliteOutboxProgress, postgres: () => postgresOutboxProgress });
    const events = new EventFeed(database.db, outbox.feed, services.feedSignal, apiMetrics.registry, registry.eventNames);
    return { services: { events }, api: eventRoutes(events) };
  },
});
