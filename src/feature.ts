import type { FastifyPluginAsync } from 'fastify';
import type { TSchema } from '@sinclair/typebox';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import type { Clock } from './clock.js';
import type { RoleMetrics } from './role-metrics.js';
import type { EventDefinition, EventNames, EventType } from './events/catalogue.js';
import type { Scopes } from './keys/scopes.js';
import type { JobDefinition } from './jobs/job-registry.js';
import type { OrganizationService } from './orgs/organizations.js';
import type { ApiKeyService } from './keys/api-keys.js';
import type { IdempotencyStore } from './idempotency/store.js';
import type { FeedSignal } from './events/feed-signal.js';
import type { DeploymentKeys } from './deployment/deployment-keys.js';
import type { DueRowClaimer } from './jobs/due-rows.js';
import type { SchemaExamples } from './http/openapi-examples.js';

/**
 * What a feature folder brings to the service, in one object (`<feature>/feature.ts`): its scopes,
 * its events, its named schemas, its OpenAPI tags, and a `build` that makes its services, routes
 * and jobs from what the composition root holds. `src/features.ts` lists the features; `context.ts`,
 * `app.ts`, the event catalogue and the OpenAPI document are assembled from that list, so adding a
 * resource means its folder, one line there, and its migration.
 *
 * The types that span features grow by declaration merging, as Fastify's own do: a feature adds its
 * services to `FeatureServices`, its tables to `Tables` (src/db/tables.ts) and its events to
 * `EventCatalogue` (src/events/catalogue.ts), so no central file imports a feature to know them.
 */
export interface Feature {
  readonly name: string;
  /** OpenAPI tags its operations use, in the order the document lists them. */
  readonly tags?: readonly OpenApiTag[];
  /** The scopes its routes check, each with the one-line explanation shown to operators. */
  readonly scopes?: Readonly<Record<string, string>>;
  /** The events it emits, each with its description and payload schema. */
  readonly events?: Readonly<Record<string, EventDefinition>>;
  /** Deliveries it sends that are not events of the catalogue (nobody subscribes to them: the ping), for the OpenAPI `webhooks` section. */
  readonly otherDeliveries?: Readonly<Record<string, EventDefinition>>;
  /** Named schemas (`$id`) its routes reference; emitted once each as OpenAPI components. */
  readonly schemas?: readonly TSchema[] | ((registry: FeatureRegistry) => readonly TSchema[]);
  /** Realistic named examples of those schemas, shown on every request and response body that uses them. */
  readonly examples?: readonly SchemaExamples[];
  build(deps: FeatureDeps): BuiltFeature;
}

export interface OpenApiTag {
  readonly name: string;
  readonly description: string;
}

/**
 * The services features build, by name: each feature adds its own with
 * `declare module '../feature.js' { interface FeatureServices { records: RecordService } }`.
 * The composition root exposes them on the context (`context.records`).
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled in by each feature
export interface FeatureServices {}

/** The catalogues assembled from every feature: what a feature may need to know of the others. */
export interface FeatureRegistry {
  /** Every event of every feature, in the order of the feature list. */
  readonly events: Readonly<Record<EventType, EventDefinition>>;
  readonly eventNames: EventNames;
  readonly eventTypes: readonly EventType[];
  /** Every scope, with its explanation, in the order of the feature list. */
  readonly scopes: Scopes;
  readonly tags: readonly OpenApiTag[];
  readonly otherDeliveries: Readonly<Record<string, EventDefinition>>;
  /** The named examples of every feature's schemas, by schema `$id`. */
  readonly examples: Readonly<Record<string, SchemaExamples['examples']>>;
}

/** What a feature's `build` is given: the shared infrastructure, and the services built before it. */
export interface FeatureDeps {
  readonly config: Config;
  readonly database: Database;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The API role's metrics and the background role's (RoleMetrics), for the feature's own series. */
  readonly apiMetrics: RoleMetrics;
  readonly workerMetrics: RoleMetrics;
  readonly registry: FeatureRegistry;
  /** Services of the features listed before this one (the list is in dependency order), and the platform's. */
  readonly services: FeatureServices & PlatformServices;
}

/** Services every feature may use that belong to no feature: built by the composition root first. */
export interface PlatformServices {
  readonly organizations: OrganizationService;
  readonly apiKeys: ApiKeyService;
  readonly idempotency: IdempotencyStore;
  /** Wakes the event feed's long-polls when events enter the feed. */
  readonly feedSignal: FeedSignal;
  /** The deployment's proof keys (statement and transparency log). */
  readonly proofKeys: DeploymentKeys['proofKeys'];
  /** Encrypts and decrypts webhook secrets with the deployment's key. */
  readonly secrets: DeploymentKeys['secrets'];
  /** Claims due rows exactly once across workers (src/jobs/due-rows.ts), for jobs that generate work. */
  readonly claimDueRows: DueRowClaimer;
}

export interface FeaturePage {
  readonly plugin: FastifyPluginAsync;
  readonly prefix?: string;
  /** Pages that act on a session cookie: never answered cross-origin, whatever WO_CORS_ORIGINS says. */
  readonly sameOriginOnly?: boolean;
}

export interface BuiltFeature {
  /** Added to the context under these names (declared in FeatureServices). */
  readonly services?: Partial<FeatureServices>;
  /** Routes under `/api/v1`. */
  readonly api?: FastifyPluginAsync;
  /** Routes outside `/api/v1` (pages), each under its prefix. */
  readonly pages?: readonly FeaturePage[];
  /** Its background jobs, registered in the job registry. */
  readonly jobs?: readonly JobDefinition[];
  /** Releases what the feature holds (connections, threads) when the context closes. */
  close?(): Promise<void>;
}

/** Checks a feature's shape where it is written (a typo in a field name fails to compile there). */
export function defineFeature<const F extends Feature>(feature: F): F {
  return feature;
}
