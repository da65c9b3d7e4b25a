import { pino, type Logger } from 'pino';
import { Counter, Registry, collectDefaultMetrics } from 'prom-client';
import type { Config } from './config.js';
import { byDialect, databaseOptions, openDatabase, type Database } from './db/database.js';
import { Lifecycle } from './lifecycle.js';
import { migrateToLatest } from './db/migrate.js';
import { systemClock, type Clock } from './clock.js';
import { OrganizationService } from './orgs/organizations.js';
import { ApiKeyService } from './keys/api-keys.js';
import { CategoryService } from './categories/service.js';
import { RecordService } from './records/service.js';
import { PostgresRecordWrites } from './records/writes-postgres.js';
import { sqliteRecordWrites } from './records/writes-sqlite.js';
import { checkRecordReferences } from './records/references.js';
import { foldRecordCountDeltas } from './records/record-counts.js';
import { LocationService } from './locations/service.js';
import { AssetService } from './assets/service.js';
import { IdempotencyStore } from './idempotency/store.js';
import { intervalLoop, type BackgroundJob } from './background-loop.js';
import { AdminService } from './admin/service.js';
import { openDeploymentKeys, type DeploymentKeys } from './deployment/deployment-keys.js';
import { ProofService } from './proofs/service.js';
import { StatementSigner } from './proofs/statement-signer.js';
import { TransparencyLog } from './proofs/transparency-log.js';
import { SequencerMetrics } from './proofs/sequencer-metrics.js';
import { createWebhooks } from './webhooks/wiring.js';
import type { WebhookService } from './webhooks/service.js';
import { RateLimiter } from './rate-limits/rate-limiter.js';
import { CommentService } from './comments/service.js';
import { AttachmentService } from './attachments/service.js';
import { resolveCompletionEvidence } from './attachments/evidence.js';
import { EventFeed } from './events/feed.js';
import { InProcessFeedSignal, type FeedSignal } from './events/feed-signal.js';
import { PostgresFeedSignal } from './events/postgres-feed-signal.js';
import { AuthenticatedKeys } from './keys/authenticated-keys.js';
import { RoleMetrics } from './role-metrics.js';

/** Everything the application is made of, built once from the config (the composition root). */
export interface AppContext {
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
  readonly organizations: OrganizationService;
  readonly apiKeys: ApiKeyService;
  readonly categories: CategoryService;
  readonly records: RecordService;
  readonly locations: LocationService;
  readonly assets: AssetService;
  readonly idempotency: IdempotencyStore;
  readonly admin: AdminService;
  readonly proofs: ProofService;
  /** The proof sequencer's log; run by the `proof-sequencer` background job. */
  readonly transparencyLog: TransparencyLog;
  readonly webhooks: WebhookService;
  /** Request budgets per API key and client address; undefined when `WO_RATE_LIMIT_PER_MINUTE` is 0. */
  readonly rateLimiter: RateLimiter | undefined;
  readonly comments: CommentService;
  readonly attachments: AttachmentService;
  readonly events: EventFeed;
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
  return pino({ level: config.logLevel, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } });
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

/** How often new completion statements are picked up for signing ahead of their seal. */
const PROOF_SIGN_AHEAD_INTERVAL_MS = 100;

/** How often work-order count deltas are folded (PostgreSQL): a list reads at most about this long's worth. */
const RECORD_COUNT_FOLD_INTERVAL_MS = 1_000;

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
  const idempotency = new IdempotencyStore(db, clock, config.idempotency.ttlHours * 3_600_000);
  const recordWrites = byDialect(database, { sqlite: () => sqliteRecordWrites, postgres: (postgres) => new PostgresRecordWrites(db, postgres.oneStatementWrites) });
  const records = new RecordService(db, clock, checkRecordReferences, resolveCompletionEvidence, recordWrites);
  const attachments = new AttachmentService(db, clock, config.attachments.maxBytes);
  const authenticatedKeys =
    database.dialect === 'postgres' ? new AuthenticatedKeys({ url: config.databaseUrl!, ...(database.schema ? { schema: database.schema } : {}), logger }) : undefined;
  const apiKeys = new ApiKeyService(db, clock, authenticatedKeys);
  const admin = new AdminService(db, clock, apiKeys);

  const statementSigner = new StatementSigner(() => proofKeys.statementSigningKey, { logger });
  const transparencyLog = new TransparencyLog(database, proofKeys, statementSigner, clock, (proofId) => `${config.publicUrl}/api/v1/proofs/${proofId}`);
  const proofs = new ProofService(db, clock, proofKeys, transparencyLog);
  records.onCompleted((executor, completion, appends) => proofs.recordCompletion(executor, completion, appends));

  // Each role's metrics reach /metrics once this process takes the role on (RoleMetrics).
  const apiMetrics = new RoleMetrics(metrics);
  const workerMetrics = new RoleMetrics(metrics);
  const sequencerMetrics = new SequencerMetrics(workerMetrics.registry);
  const backgroundJobs: BackgroundJob[] = [
    intervalLoop({ name: 'idempotency-purge', intervalMs: 10 * 60_000, work: () => idempotency.purgeExpired(), logger, errorMessage: 'idempotency purge failed' }),
    intervalLoop({ name: 'attachment-sweeper', intervalMs: 10 * 60_000, work: () => attachments.sweepAbandonedUploads(), logger, errorMessage: 'sweeping abandoned uploads failed' }),
    intervalLoop({ name: 'admin-purge', intervalMs: 10 * 60_000, work: () => admin.purgeExpired(), logger, errorMessage: 'admin session purge failed' }),
    intervalLoop({
      name: 'proof-sequencer',
      intervalMs: config.proofs.batchIntervalMs,
      work: () => sequencerMetrics.observe(() => transparencyLog.sealPending()),
      onStart: () => workerMetrics.expose(),
      logger,
      errorMessage: 'proof sequencing failed',
    }),
  ];
  // On SQLite, statements are signed between seals as they come (see TransparencyLog.signAhead); on
  // PostgreSQL only the sequencer holding the lock signs, inside its seal.
  if (database.dialect === 'sqlite') {
    backgroundJobs.push(
      intervalLoop({ name: 'proof-signer', intervalMs: PROOF_SIGN_AHEAD_INTERVAL_MS, work: () => transparencyLog.signAhead(), logger, errorMessage: 'signing completion statements failed' }),
    );
  }
  if (database.dialect === 'postgres') {
    // Work-order counts are appended as deltas on PostgreSQL; folding them keeps the readers' sums short.
    backgroundJobs.push(
      intervalLoop({ name: 'record-count-fold', intervalMs: RECORD_COUNT_FOLD_INTERVAL_MS, work: () => foldRecordCountDeltas(db), logger, errorMessage: 'folding work-order count deltas failed' }),
    );
  }

  const feedSignal: FeedSignal =
    database.dialect === 'postgres'
      ? new PostgresFeedSignal({ url: config.databaseUrl!, ...(database.schema ? { schema: database.schema } : {}), logger })
      : new InProcessFeedSignal();
  const webhooks = createWebhooks({ config, database, clock, logger, workerMetrics, secrets, onEventsDispatched: (orgIds) => feedSignal.wake(orgIds) });
  backgroundJobs.push(...webhooks.jobs);
  const rateLimiter = RateLimiter.fromConfig(config, logger, apiMetrics.registry);

  const context: AppContext = {
    config,
    database,
    clock,
    logger,
    metrics,
    apiMetrics,
    lifecycle: new Lifecycle(),
    organizations: new OrganizationService(db, clock),
    apiKeys,
    categories: new CategoryService(db, clock),
    records,
    locations: new LocationService(db, clock),
    assets: new AssetService(db, clock, records),
    idempotency,
    admin,
    proofs,
    transparencyLog,
    webhooks: webhooks.service,
    rateLimiter,
    comments: new CommentService(db, clock),
    attachments,
    events: new EventFeed(db, database.dialect, feedSignal, apiMetrics.registry),
    backgroundJobs,
    async close() {
      await Promise.all(backgroundJobs.map((job) => job.stop()));
      await feedSignal.close();
      await authenticatedKeys?.close();
      await statementSigner.stop();
      await rateLimiter?.close();
      await database.close();
    },
  };
  return context;
}
