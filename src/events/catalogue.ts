import type { TObject } from '@sinclair/typebox';

/** One event the service emits: what it means and the schema of its payload. */
export interface EventDefinition {
  readonly description: string;
  readonly payload: TObject;
}

/**
 * Every event name the service emits. Empty here: each feature adds its own events
 * (`<feature>/events.ts`, `interface EventCatalogue extends Record<…>`), so this module knows no
 * feature and an emit of a name no feature declares fails to compile.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled in by each feature
export interface EventCatalogue {}

export type EventType = keyof EventCatalogue & string;

/**
 * The catalogue assembled from the features' events, in their order: the single source for the
 * subscriptions' and the feed's validation, for docs/events.md and for the OpenAPI `webhooks` section.
 */
export class EventNames {
  readonly types: readonly EventType[];

  constructor(readonly definitions: Readonly<Record<EventType, EventDefinition>>) {
    this.types = Object.keys(definitions) as EventType[];
  }

  has(value: string): value is EventType {
    return Object.hasOwn(this.definitions, value);
  }
}
