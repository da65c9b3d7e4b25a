import { Type, type Static } from '@sinclair/typebox';
import { IdOf, JsonObject, StringEnum, Timestamp } from '../http/schema-types.js';
import { ListQuery, listEnvelope } from '../http/pagination.js';
import type { EventType } from './catalogue.js';

/** Longest wait a long-poll may ask for, in seconds. */
export const MAX_WAIT_SECONDS = 30;

/** One event of the feed; its `type` is one of the catalogue's names (assembled from the features). */
export const feedEventSchema = (eventTypes: readonly EventType[]) =>
  Type.Object(
  {
    id: IdOf('evt', 'The event id (`evt_…`): every webhook delivery of this event carries it as `X-Webhook-Id`. Deduplicate on it.'),
    type: StringEnum(eventTypes, { description: 'The event name.' }),
    sequence: Type.Integer({
      minimum: 1,
      description: 'The event’s position in the feed: increasing, not contiguous (other organizations’ events fall between). Pass the last one you processed as `after`.',
    }),
    occurredAt: Timestamp,
    payload: JsonObject({ description: 'Exactly the webhook payload of this event (the envelope’s `payload`, `sequence` included); shapes in the `webhooks` section.' }),
  },
  { $id: 'Event', description: 'One event, as webhooks deliver it.' },
);

export const EventListQuery = ListQuery({
  type: Type.Optional(
    Type.String({ minLength: 1, maxLength: 2000, description: 'Only these events: comma-separated names from the catalogue (`asset.deleted,location.deleted`).' }),
  ),
  after: Type.Optional(
    Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Only events after this `sequence`: the last one you processed.' }),
  ),
  wait: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_WAIT_SECONDS,
      description: 'Long-poll: when nothing matches yet, wait up to this many seconds for a matching event before answering an empty page.',
    }),
  ),
});
export type EventListQuery = Static<typeof EventListQuery>;

export const EventList = listEnvelope('events', Type.Ref('Event'), { $id: 'EventList', description: 'A page of the event feed, oldest first.' });

/** This feature's named schemas: registered once with the app, emitted as OpenAPI components. */
export const eventComponents = (eventTypes: readonly EventType[]) => [feedEventSchema(eventTypes), EventList];
