import path from 'node:path';
import { pino, type Logger } from 'pino';
import { Counter, Registry, collectDefaultMetrics } from 'prom-client';
import type { Config } from './config.js';
import { openDatabase, type Database } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { systemClock, type Clock } from './clock.js';
import { OrganizationService } from './orgs/organizations.js';
import { ApiKeyService } from './keys/api-keys.js';
import { CategoryService } from './categories/service.js';
import { RecordService } from './records/service.js';
import { checkRecordReferences } from './records/references.js';
import { LocationService } from './locations/service.js';
import { AssetService } from './assets/service.js';
import { IdempotencyStore } from './idempotency/store.js';
import { intervalLoop, type BackgroundJob } from './background-loop.js';
import { AdminService } from './admin/service.js';
import { ProofKeys } from './proofs/keys.js';
import { ProofService } from './proofs/service.js';
import { StatementSigner } from './proofs/statement-signer.js';
import { TransparencyLog } from './proofs/transparency-log.js';
import { createWebhooks } from './webhooks/wiring.js';
import type { WebhookService } from './webhooks/service.js';
import { EventFeed } from './events/feed.js';
import { InProcessFeedSignal, type FeedSignal } from './events/feed-signal.js';
import { PostgresFeedSignal } from './events/postgres-feed-signal.js';

/** Everything the application is made of, built once from the config (the composition root). */
export interface AppContext {
  readonly config: Config;
  readonly database: Database;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: Registry;
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

/** SQLite group commit, observable: members ÷ commits is the average group size. */
function registerDatabaseMetrics(metrics: Registry, database: Database): void {
  const stats = database.groupCommit;
  const checkpoints = database.walCheckpoints;
  if (!stats || !checkpoints) return;
  new Counter({
    name: 'wo_sqlite_wal_checkpoints_total',
    help: 'WAL checkpoints run by the background thread that copied pages into the database file',
    registers: [metrics],
    collect() {
      this.reset();
      this.inc(checkpoints.count);
    },
  });
  const counters: [string, string, keyof typeof stats][] = [
    ['wo_sqlite_group_commits_total', 'SQLite commits, each covering a group of transactions and writes', 'commits'],
    ['wo_sqlite_group_members_total', 'Transactions and single writes committed through group commit', 'members'],
    ['wo_sqlite_group_failures_total', 'Groups whose commit failed (all their members failed)', 'failures'],
  ];
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

export async function createContext(config: Config, options: ContextOptions = {}): Promise<AppContext> {
  const logger = options.logger ?? createLogger(config);
  const clock = options.clock ?? systemClock;
  const database = openDatabase({
    ...(config.databaseUrl ? { url: config.databaseUrl } : { sqlitePath: path.join(config.dataDir, 'wo.sqlite') }),
    ...(options.databaseSchema ? { schema: options.databaseSchema } : {}),
  });
  if (options.migrate !== false) await migrateToLatest(database);

  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  registerDatabaseMetrics(metrics, database);

  const { db } = database;
  const idempotency = new IdempotencyStore(db, clock, config.idempotency.ttlHours * 3_600_000);
  const records = new RecordService(db, clock, checkRecordReferences);
  const apiKeys = new ApiKeyService(db, clock);
  const admin = new AdminService(db, clock, apiKeys);

  const proofKeys = ProofKeys.loadOrCreate(config.keysDir, config.proofs.logOrigin, clock);
  const statementSigner = new StatementSigner(proofKeys.statementSigningKey, { logger });
  const transparencyLog = new TransparencyLog(database, proofKeys, statementSigner, clock, (proofId) => `${config.publicUrl}/api/v1/proofs/${proofId}`);
  const proofs = new ProofService(db, clock, proofKeys, transparencyLog);
  records.onCompleted((tx, completion) => proofs.recordCompletion(tx, completion));

  const backgroundJobs: BackgroundJob[] = [
    intervalLoop({ name: 'idempotency-purge', intervalMs: 10 * 60_000, work: () => idempotency.purgeExpired(), logger, errorMessage: 'idempotency purge failed' }),
    intervalLoop({ name: 'admin-purge', intervalMs: 10 * 60_000, work: () => admin.purgeExpired(), logger, errorMessage: 'admin session purge failed' }),
    intervalLoop({ name: 'proof-sequencer', intervalMs: config.proofs.batchIntervalMs, work: () => transparencyLog.sealPending(), logger, errorMessage: 'proof sequencing failed' }),
  ];
  // On SQLite, statements are signed between seals as they come (see TransparencyLog.signAhead); on
  // PostgreSQL only the sequencer holding the lock signs, inside its seal.
  if (database.dialect === 'sqlite') {
    backgroundJobs.push(
      intervalLoop({ name: 'proof-signer', intervalMs: PROOF_SIGN_AHEAD_INTERVAL_MS, work: () => transparencyLog.signAhead(), logger, errorMessage: 'signing completion statements failed' }),
    );
  }
  const feedSignal: FeedSignal =
    database.dialect === 'postgres'
      ? new PostgresFeedSignal({ url: config.databaseUrl!, ...(database.schema ? { schema: database.schema } : {}), logger })
      : new InProcessFeedSignal();
  const webhooks = createWebhooks({ config, database, clock, logger, metrics, onEventsDispatched: (orgIds) => feedSignal.wake(orgIds) });
  backgroundJobs.push(...webhooks.jobs);

  const context: AppContext = {
    config,
    database,
    clock,
    logger,
    metrics,
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
    events: new EventFeed(db, database.dialect, feedSignal, metrics),
    backgroundJobs,
    async close() {
      await Promise.all(backgroundJobs.map((job) => job.stop()));
      await feedSignal.close();
      await statementSigner.stop();
      await database.close();
    },
  };
  return context;
}
