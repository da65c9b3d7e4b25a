import { pino, type Logger } from 'pino';
import { Counter, Registry, collectDefaultMetrics } from 'prom-client';
import type { Config } from './config.js';
import { logDestination } from './logging.js';
import { byDialect, databaseOptions, openDatabase, type Database } from './db/database.js';
import { Lifecycle } from './lifecycle.js';
import { migrateToLatest } from './db/migrate.js';
import { systemClock, type Clock } from './clock.js';
import { OrganizationService } from './orgs/organizations.js';
import { ApiKeyService } from './keys/api-keys.js';
import type { Scopes } from './keys/scopes.js';
import { IdempotencyStore } from './idempotency/store.js';
import { intervalLoop, type BackgroundJob } from './background-loop.js';
import { openDeploymentKeys, type DeploymentKeys } from './deployment/deployment-keys.js';
import { RateLimiter } from './rate-limits/rate-limiter.js';
import { InProcessFeedSignal, type FeedSignal } from './events/feed-signal.js';
import { PostgresFeedSignal } from './events/postgres-feed-signal.js';
import { announceRevocation, AuthenticatedKeys, postgresRevocationWatch, sqliteRevocationWatch } from './keys/authenticated-keys.js';
import { RoleMetrics } from './role-metrics.js';
import { JobRegistry } from './jobs/job-registry.js';
import { DUE_ROW_CLAIMERS } from './jobs/due-rows.js';
import { CHECKPOINT_INTERVAL_MS } from './db/sqlite/wal-checkpointer.js';
import type { BuiltFeature, Feature, FeatureRegistry, FeatureServices, PlatformServices } from './feature.js';
import { FEATURES, assembleRegistry } from './features.js';

/** Everything the application is made of, built once from the config (the composition root). */
export interface AppContext extends FeatureServices, PlatformServices {
  readonly config: Config;
  readonly database: Database;
  readonly clock: Clock;
  readonly logger: Logger;
  /** What /metrics serves: the process's own metrics, and each role's once the process takes it on. */
  readonly metrics: Registry;
  /** The API role's metrics (rate limits, the event feed), exposed by buildApp. */
  readonly apiMetrics: RoleMetrics;
  /** Running, draining or closing: set by the signal handling in run-service.ts, read by /readyz. */
  readonly lifecycle: Lifecycle;
  /** What the features declare, assembled: events, scopes, OpenAPI tags. */
  readonly registry: FeatureRegistry;
  /** The scopes an API key can hold. */
  readonly scopes: Scopes;
  /** The features this service is made of (src/features.ts). */
  readonly features: readonly Feature[];
  /** What each feature built: its routes and pages, mounted by buildApp. */
  readonly builtFeatures: readonly BuiltFeature[];
  /** Every background job, with where it runs. */
  readonly jobs: JobRegistry;
  /** Request budgets per API key and client address; undefined when `WO_RATE_LIMIT_PER_MINUTE` is 0. */
  readonly rateLimiter: RateLimiter | undefined;
  /** Loops run by the worker role (`wo worker`, or inside `wo serve`). */
  readonly backgroundJobs: BackgroundJob[];
  close(): Promise<void>;
}

export interface ContextOptions {
  clock?: Clock;
  logger?: Logger;
  /** PostgreSQL schema to use (tests isolate themselves this way). */
  databaseSchema?: string;
  /** Skip running migrations (the CLI's `migrate` runs them itself). */
  migrate?: boolean;
  /**
   * `wo serve` and `wo worker`: on a deployment with no keys recorded yet, create the missing keys
   * and record them, which fixes the log's origin. Otherwise the keys are only checked.
   */
  createKeys?: boolean;
  /** The database sessions' `application_name` (DatabaseOptions); the CLI's commands leave the default. */
  applicationName?: string;
  /** The features to build (src/features.ts by default). */
  features?: readonly Feature[];
}

/** @NOTE: these paths never reach the logs, whatever object is logged. */
const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.key',
  '*.secret',
  '*.password',
  '*.token',
];

export function createLogger(config: Config): Logger {
  return pino({ level: config.logLevel, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, logDestination());
}

/**
 * Node's default metrics, less the three gauges prom-client names like counters (`*_total`), which
 * `promtool check metrics` reports: `nodejs_active_handles{type}` and its siblings carry the same counts by type.
 */
const MISNAMED_DEFAULT_GAUGES = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];
function registerProcessMetrics(metrics: Registry): void {
  collectDefaultMetrics({ register: metrics });
  for (const name of MISNAMED_DEFAULT_GAUGES) metrics.removeSingleMetric(name);
}

/** Group commit, observable: members ÷ commits is the average group size. */
function registerDatabaseMetrics(metrics: Registry, database: Database): void {
  const groups = database.commitGroups;
  if (groups) {
    registerStatCounters(metrics, groups, [
      ['wo_postgres_commit_groups_total', 'PostgreSQL transactions each committing a group of one-statement writes', 'commits'],
      ['wo_postgres_commit_group_members_total', 'One-statement writes committed in a group', 'members'],
      ['wo_postgres_writes_alone_total', 'One-statement writes committed on their own (nothing was running, or their group failed)', 'alone'],
      ['wo_postgres_commit_group_retries_total', 'Writes of groups that failed, run again on their own', 'retriedAlone'],
    ]);
  }
  const stats = database.groupCommit;
  const checkpoints = database.walCheckpoints;
  if (!stats || !checkpoints) return;
  registerStatCounters(metrics, checkpoints, [['wo_sqlite_wal_checkpoints_total', 'WAL checkpoints run by the background thread that copied pages into the database file', 'count']]);
  registerStatCounters(metrics, stats, [
    ['wo_sqlite_group_commits_total', 'SQLite commits, each covering a group of transactions and writes', 'commits'],
    ['wo_sqlite_group_members_total', 'Transactions and single writes committed through group commit', 'members'],
    ['wo_sqlite_group_failures_total', 'Groups whose commit failed (all their members failed)', 'failures'],
  ]);
}

/** Counters read, when scraped, from fields of a stats object that the database layer keeps up to date. */
function registerStatCounters<K extends string>(metrics: Registry, stats: Record<K, number>, counters: [name: string, help: string, field: K][]): void {
  for (const [name, help, field] of counters) {
    new Counter({
      name,
      help,
      registers: [metrics],
      collect() {
        this.reset();
        this.inc(stats[field]);
      },
    });
  }
}

/**
 * Migrates the schema and checks this process's keys against the deployment's (creating them on a
 * first `serve`/`worker` start). On failure the database is closed: left open, it would keep the
 * process alive after the failed start.
 */
async function prepareDatabase(database: Database, config: Config, options: ContextOptions, deps: { clock: Clock; logger: Logger }): Promise<DeploymentKeys> {
  try {
    if (options.migrate !== false) await migrateToLatest(database);
    return await openDeploymentKeys(database, config, { createKeys: options.createKeys ?? false, ...deps });
  } catch (error) {
    await database.close();
    throw error;
  }
}

export async function createContext(config: Config, options: ContextOptions = {}): Promise<AppContext> {
  const logger = options.logger ?? createLogger(config);
  const clock = options.clock ?? systemClock;
  const database = openDatabase(
    databaseOptions(config, {
      logger,
      ...(options.databaseSchema ? { schema: options.databaseSchema } : {}),
      ...(options.applicationName ? { applicationName: options.applicationName } : {}),
    }),
  );
  const { proofKeys, secrets } = await prepareDatabase(database, config, options, { clock, logger });

  const metrics = new Registry();
  registerProcessMetrics(metrics);
  registerDatabaseMetrics(metrics, database);

  const { db } = database;
  const features = options.features ?? FEATURES;
  const registry = assembleRegistry(features);
  // PostgreSQL claims a key in its request's own transaction where it can (IdempotencyStore's defersClaims).
  const idempotency = new IdempotencyStore(db, clock, config.idempotency.ttlHours * 3_600_000, byDialect(database, { sqlite: () => false, postgres: () => true }));
  const authenticatedKeys = new AuthenticatedKeys(
    byDialect(database, {
      sqlite: (sqlite) => sqliteRevocationWatch(sqlite.dataVersion),
      postgres: () => postgresRevocationWatch({ url: config.databaseUrl!, ...(database.schema ? { schema: database.schema } : {}), logger }),
    }),
  );
  const revocationNotice = byDialect(database, { sqlite: () => async () => {}, postgres: () => announceRevocation });
  const apiKeys = new ApiKeyService(db, clock, registry.scopes, revocationNotice, authenticatedKeys);
  const feedSignal: FeedSignal =
    database.dialect === 'postgres'
      ? new PostgresFeedSignal({ url: config.databaseUrl!, ...(database.schema ? { schema: database.schema } : {}), logger })
      : new InProcessFeedSignal();
  const claimDueRows = byDialect(database, { sqlite: () => DUE_ROW_CLAIMERS.sqlite, postgres: () => DUE_ROW_CLAIMERS.postgres });
  const platform: PlatformServices = { organizations: new OrganizationService(db, clock), apiKeys, idempotency, feedSignal, proofKeys, secrets, claimDueRows };

  // Each role's metrics reach /metrics once this process takes the role on (RoleMetrics).
  const apiMetrics = new RoleMetrics(metrics);
  const workerMetrics = new RoleMetrics(metrics);
  const jobs = new JobRegistry();
  registerPlatformJobs(jobs, { idempotency, apiKeys, logger });
  if (database.dialect === 'sqlite' && database.walCheckpointer) {
    jobs.register({ placement: 'every-process', periodMs: CHECKPOINT_INTERVAL_MS, does: 'copies committed WAL pages into the SQLite file, on a thread of its own', loop: database.walCheckpointer.loop });
  }

  // Each feature is built on the services of those before it, and adds its own.
  const services = { ...platform } as FeatureServices & PlatformServices;
  const builtFeatures: BuiltFeature[] = [];
  try {
    for (const feature of features) {
      const built = feature.build({ config, database, clock, logger, apiMetrics, workerMetrics, registry, services });
      Object.assign(services, built.services);
      for (const job of built.jobs ?? []) jobs.register(job);
      builtFeatures.push(built);
    }
  } catch (error) {
    // A feature refusing its configuration (a policy or TSA roots it cannot read) must let the process
    // exit: what was opened so far would hold it open.
    for (const built of [...builtFeatures].reverse()) await built.close?.();
    await feedSignal.close();
    await authenticatedKeys.close();
    await database.close();
    throw error;
  }
  const rateLimiter = RateLimiter.fromConfig(config, logger, apiMetrics.registry);

  const context: AppContext = {
    ...services,
    config,
    database,
    clock,
    logger,
    metrics,
    apiMetrics,
    lifecycle: new Lifecycle(),
    registry,
    features,
    scopes: registry.scopes,
    builtFeatures,
    jobs,
    rateLimiter,
    backgroundJobs: jobs.workerLoops(),
    async close() {
      await jobs.stopAll();
      await feedSignal.close();
      await authenticatedKeys.close();
      for (const built of [...builtFeatures].reverse()) await built.close?.();
      await rateLimiter?.close();
      await database.close();
    },
  };
  return context;
}

const PURGE_INTERVAL_MS = 10 * 60_000;
const KEY_LAST_USE_INTERVAL_MS = 1_000;

/** The background jobs of the platform's own services (the features register theirs as they are built). */
function registerPlatformJobs(jobs: JobRegistry, deps: { idempotency: IdempotencyStore; apiKeys: ApiKeyService; logger: Logger }): void {
  const { idempotency, apiKeys, logger } = deps;
  jobs.register({
    placement: 'every-worker',
    periodMs: PURGE_INTERVAL_MS,
    does: 'deletes expired Idempotency-Key answers',
    loop: intervalLoop({ name: 'idempotency-purge', intervalMs: PURGE_INTERVAL_MS, work: () => idempotency.purgeExpired(), logger, errorMessage: 'idempotency purge failed' }),
  });
  // The API's own loop: keys' last use is written here, never by the request that used the key; what
  // is left is written when the loop stops.
  const lastUses = intervalLoop({ name: 'api-key-last-use', intervalMs: KEY_LAST_USE_INTERVAL_MS, work: () => apiKeys.writeLastUses(), logger, errorMessage: 'recording API keys’ last use failed' });
  jobs.register({
    placement: 'api',
    periodMs: KEY_LAST_USE_INTERVAL_MS,
    does: 'writes when each API key was last used, from what this process’s requests noted',
    loop: {
      name: lastUses.name,
      start: () => lastUses.start(),
      async stop() {
        await lastUses.stop();
        await apiKeys.writeLastUses();
      },
    },
  });
}
