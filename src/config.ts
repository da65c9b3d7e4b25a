import path from 'node:path';

/**
 * The service configuration: read from the environment in one place, checked, frozen.
 * Nothing else in the codebase reads `process.env`; everything receives a Config.
 */
export interface Config {
  readonly port: number;
  readonly host: string;
  /** Where the embedded database, key files and other local state live. */
  readonly dataDir: string;
  /** `postgres://…` selects PostgreSQL; unset selects SQLite at `<dataDir>/wo.sqlite`. */
  readonly databaseUrl: string | undefined;
  readonly redisUrl: string | undefined;
  /** Absolute base URL clients use to reach us (links in events and proofs). */
  readonly publicUrl: string;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Behind a load balancer: trust X-Forwarded-For (true, or the number of proxy hops) for client addresses. */
  readonly trustProxy: boolean | number;
  /** Directory holding the signing keys and the secret-encryption key, apart from the database. */
  readonly keysDir: string;
  readonly webhooks: {
    /** Lets receivers live on loopback/private networks (development and tests). */
    readonly allowPrivateUrls: boolean;
    /** Base of the exponential backoff between delivery attempts. */
    readonly retryBaseMs: number;
    /** How long a receiver has to answer one delivery. */
    readonly timeoutMs: number;
    readonly maxAttempts: number;
    /** Deliveries in flight at once per worker process. */
    readonly concurrency: number;
    /** Deliveries in flight at once per subscription in one worker, so a slow receiver cannot take every slot. */
    readonly perSubscriptionConcurrency: number;
    /** How long the dispatcher and delivery loops wait before polling again when they found no work. */
    readonly idlePollMs: number;
    /** AES-256-GCM key (32 bytes, base64 or hex) for webhook secrets at rest; when unset, a key file in keysDir. */
    readonly secretKey: string | undefined;
    /** Finished deliveries (and their attempts) older than this are deleted; events are kept per `events.retentionDays`. */
    readonly retentionDays: number;
  };
  readonly events: {
    /** Events stay in the outbox, and so in the event feed, at least this long. */
    readonly retentionDays: number;
  };
  readonly proofs: {
    /** Longest time a completed job waits before the sequencer seals it into the log. */
    readonly batchIntervalMs: number;
    /** Origin line of the transparency log's checkpoints (C2SP tlog-checkpoint). */
    readonly logOrigin: string;
  };
  readonly idempotency: {
    readonly ttlHours: number;
  };
  /**
   * How much V8 lets the old generation grow past what the last full GC kept, in percent (V8's
   * `--heap-growing-percent`), for the long-running commands; 0 leaves V8's own factor (up to 4×).
   */
  readonly heapGrowingPercent: number;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

function readInteger(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function readBoolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
}

function readSecretKey(env: Env): string | undefined {
  const raw = env.WO_SECRET_KEY?.trim();
  if (!raw) return undefined;
  const bytes = /^[0-9a-fA-F]{64}$/.test(raw) ? 32 : /^[A-Za-z0-9+/_-]+={0,2}$/.test(raw) ? Buffer.from(raw, 'base64').length : 0;
  if (bytes !== 32) throw new ConfigError('WO_SECRET_KEY must be 32 bytes, written as 64 hex digits or base64');
  return raw;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * Builds a Config from an environment map. `overrides` lets tests and the CLI
 * adjust single values without touching the process environment.
 */
export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const port = readInteger(env, 'PORT', 8080, 0, 65535);
  const host = env.HOST?.trim() || '127.0.0.1';
  const dataDir = path.resolve(env.WO_DATA_DIR?.trim() || './data');

  const databaseUrl = env.DATABASE_URL?.trim() || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with postgres:// (leave it unset for the embedded SQLite database)');
  }
  const redisUrl = env.REDIS_URL?.trim() || undefined;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) throw new ConfigError('REDIS_URL must start with redis:// or rediss://');

  const publicUrlRaw = env.WO_PUBLIC_URL?.trim() || `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  let publicUrl: string;
  try {
    const parsed = new URL(publicUrlRaw);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('protocol');
    publicUrl = parsed.toString().replace(/\/$/, '');
  } catch {
    throw new ConfigError(`WO_PUBLIC_URL must be an absolute http(s) URL, got "${publicUrlRaw}"`);
  }

  const logLevel = (env.LOG_LEVEL?.trim().toLowerCase() || 'info') as Config['logLevel'];
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);

  const trustProxyRaw = env.WO_TRUST_PROXY?.trim().toLowerCase() ?? '';
  const trustProxy = /^\d{1,2}$/.test(trustProxyRaw) ? Number(trustProxyRaw) : readBoolean(env, 'WO_TRUST_PROXY', false);

  const config: Config = {
    port,
    host,
    dataDir,
    databaseUrl,
    redisUrl,
    publicUrl,
    logLevel,
    trustProxy,
    keysDir: path.resolve(env.WO_KEYS_DIR?.trim() || path.join(dataDir, 'keys')),
    webhooks: {
      allowPrivateUrls: readBoolean(env, 'WO_WEBHOOK_ALLOW_PRIVATE_URLS', false),
      retryBaseMs: readInteger(env, 'WO_WEBHOOK_RETRY_BASE_MS', 30_000, 1, 86_400_000),
      timeoutMs: readInteger(env, 'WO_WEBHOOK_TIMEOUT_MS', 10_000, 1, 60_000),
      maxAttempts: 4,
      concurrency: readInteger(env, 'WO_WEBHOOK_CONCURRENCY', 128, 1, 1024),
      perSubscriptionConcurrency: readInteger(env, 'WO_WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY', 32, 1, 1024),
      idlePollMs: readInteger(env, 'WO_WEBHOOK_IDLE_POLL_MS', 50, 1, 60_000),
      secretKey: readSecretKey(env),
      retentionDays: readInteger(env, 'WO_WEBHOOK_RETENTION_DAYS', 30, 1, 3650),
    },
    events: { retentionDays: readInteger(env, 'WO_EVENT_RETENTION_DAYS', 30, 1, 3650) },
    proofs: {
      batchIntervalMs: readInteger(env, 'WO_PROOF_BATCH_INTERVAL_MS', 1000, 10, 60_000),
      logOrigin: env.WO_LOG_ORIGIN?.trim() || `${new URL(publicUrl).host}/work-orders/log`,
    },
    idempotency: { ttlHours: 24 },
    heapGrowingPercent: readInteger(env, 'WO_HEAP_GROWING_PERCENT', 50, 0, 1000),
    ...overrides,
  };
  return Object.freeze(config);
}
