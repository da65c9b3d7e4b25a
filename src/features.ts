import type { EventDefinition, EventType } from './events/catalogue.js';
import { EventNames } from './events/catalogue.js';
import type { Feature, FeatureRegistry, OpenApiTag } from './feature.js';
import { Scopes, type Scope } from './keys/scopes.js';
import type { SchemaExamples } from './http/openapi-examples.js';
import { categoriesFeature } from './categories/feature.js';
import { recordsFeature } from './records/feature.js';
import { commentsFeature } from './comments/feature.js';
import { attachmentsFeature } from './attachments/feature.js';
import { locationsFeature } from './locations/feature.js';
import { assetsFeature } from './assets/feature.js';
import { metersFeature } from './meters/feature.js';
import { schedulesFeature } from './schedules/feature.js';
import { peopleFeature } from './people/feature.js';
import { partsFeature } from './parts/feature.js';
import { costsFeature } from './costs/feature.js';
import { customFieldsFeature } from './custom-fields/feature.js';
import { checklistsFeature } from './checklists/feature.js';
import { requestsFeature } from './requests/feature.js';
import { intakeFeature } from './intake/feature.js';
import { proofsFeature } from './proofs/feature.js';
import { webhooksFeature } from './webhooks/feature.js';
import { eventFeedFeature } from './events/feature.js';
import { adminFeature } from './admin/feature.js';

/**
 * Every feature of the service, in dependency order: a feature's `build` sees the services of those
 * above it. The order is also the order of the API's paths, components, tags, scopes and events in
 * the OpenAPI document. Adding a resource: its folder with its feature.ts, one line here, its migration.
 */
export const FEATURES: readonly Feature[] = [
  recordsFeature,
  commentsFeature,
  attachmentsFeature,
  categoriesFeature,
  assetsFeature,
  locationsFeature,
  metersFeature,
  schedulesFeature,
  peopleFeature,
  partsFeature,
  costsFeature,
  customFieldsFeature,
  checklistsFeature,
  requestsFeature,
  intakeFeature,
  proofsFeature,
  webhooksFeature,
  eventFeedFeature,
  adminFeature,
];

/** The catalogues assembled from the features' declarations. */
export function assembleRegistry(features: readonly Feature[]): FeatureRegistry {
  const events: Record<string, EventDefinition> = {};
  const otherDeliveries: Record<string, EventDefinition> = {};
  const scopes: Record<string, string> = {};
  const tags: OpenApiTag[] = [];
  const examples: Record<string, SchemaExamples['examples']> = {};
  for (const feature of features) {
    mergeUnique(events, feature.events, `event of ${feature.name}`);
    mergeUnique(otherDeliveries, feature.otherDeliveries, `delivery of ${feature.name}`);
    mergeUnique(scopes, feature.scopes, `scope of ${feature.name}`);
    tags.push(...(feature.tags ?? []));
    mergeUnique(examples, Object.fromEntries((feature.examples ?? []).map((entry) => [entry.schemaId, entry.examples])), `examples of ${feature.name}`);
  }
  const eventNames = new EventNames(events as Record<EventType, EventDefinition>);
  return { events: eventNames.definitions, eventNames, eventTypes: eventNames.types, scopes: new Scopes(scopes as Record<Scope, string>), tags, otherDeliveries, examples };
}

function mergeUnique<V>(into: Record<string, V>, from: Readonly<Record<string, V>> | undefined, what: string): void {
  for (const [name, value] of Object.entries(from ?? {})) {
    if (Object.hasOwn(into, name)) throw new Error(`${what}: "${name}" is declared twice`);
    into[name] = value;
  }
}

/** The registry of this build's features. */
export const FEATURE_REGISTRY = assembleRegistry(FEATURES);
/** Every scope, in the features' order (the CLI's help, the tests' all-powerful keys). */
export const ALL_SCOPES: Scope[] = [...FEATURE_REGISTRY.scopes.all];
export const EVENT_TYPES: EventType[] = [...FEATURE_REGISTRY.eventTypes];
export const EVENT_CATALOGUE = FEATURE_REGISTRY.events;
