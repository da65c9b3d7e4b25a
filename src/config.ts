import path from 'node:path';

/**
 * The service configuration: read from the environment in one place, checked, frozen.
 * Nothing else in the codebase reads `process.env`; everything receives a Config.
 */
export interface Config {
  readonly port: number;
  readonly host: string;
  /** Where `wo worker` serves /healthz, /readyz and /metrics; 0: nowhere. */
  readonly workerPort: number;
  /** After SIGTERM/SIGINT, how long /readyz answers 503 while everything else is still served. */
  readonly shutdownDrainMs: number;
  /** How long a request's body may go without a byte arriving before it is answered 408 and its connection closed. */
  readonly bodyIdleTimeoutMs: number;
  /** Where the embedded database, key files and other local state live. */
  readonly dataDir: string;
  /** `postgres://…` selects PostgreSQL; unset selects SQLite at `<dataDir>/wo.sqlite`. */
  readonly databaseUrl: string | undefined;
  readonly redisUrl: string | undefined;
  /** PostgreSQL only (see docs/deployment.md for sizing). */
  readonly database: {
    /** Connections per process. */
    readonly poolSize: number;
    /** Longest wait for a free connection, or for a new one to open, before the request answers 503. */
    readonly poolWaitMs: number;
    /** Server-side `statement_timeout` of every session; 0: none. */
    readonly statementTimeoutMs: number;
  };
  /** Absolute base URL clients use to reach us (links in events and proofs). */
  readonly publicUrl: string;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Behind a load balancer: trust X-Forwarded-For (true, or the number of proxy hops) for client addresses. */
  readonly trustProxy: boolean | number;
  /** Browser origins allowed to call the API (CORS): a list, `*` for any, undefined for no CORS at all. */
  readonly corsOrigins: readonly string[] | '*' | undefined;
  /** Directory holding the signing keys and the secret-encryption key, apart from the database. */
  readonly keysDir: string;
  readonly webhooks: {
    /** Lets receivers live on loopback/private networks (development and tests). */
    readonly allowPrivateUrls: boolean;
    /** Wait before the first retry of a delivery (± jitter); each later wait is `retryFactor` times longer. */
    readonly retryBaseMs: number;
    readonly retryFactor: number;
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
    /**
     * Longest time a completed job waits before the sequencer seals it into the log. 250 ms by default:
     * `record.proof_delivered` then follows a completion promptly, where 1 s made it wait most of that
     * second (bench/analysis.md, sessions 10 and 20). The price is one signed checkpoint per seal that
     * finds statements: at most four a second, small next to the statements a loaded service stores
     * in that time.
     */
    readonly batchIntervalMs: number;
    /** Origin line of the transparency log's checkpoints (C2SP tlog-checkpoint). */
    readonly logOrigin: string;
    /** `WO_WITNESS_POLICY`: a C2SP tlog-policy file naming the witnesses each checkpoint is submitted to and their quorum; unset, checkpoints are published as the log signs them. */
    readonly witnessPolicyFile: string | undefined;
    /** `WO_WITNESS_FAIL_OPEN`: publish a checkpoint the quorum did not cosign in one round, flagged unwitnessed, rather than wait for the witnesses. */
    readonly witnessFailOpen: boolean;
    /** `WO_WITNESS_TIMEOUT_MS`: how long one witness has to answer one submission. */
    readonly witnessTimeoutMs: number;
    /** `WO_TSA_URL` and `WO_TSA_ROOTS`: the RFC 3161 TSA that timestamps each published checkpoint, and a PEM file of the roots its certificate must chain to; unset, checkpoints carry no timestamp. */
    readonly timestampAuthority: { readonly url: string; readonly rootsFile: string } | undefined;
  };
  /** `wo witness`: a witness process, run by whoever wants to bound what the log can rewrite. */
  readonly witness: {
    /** `WO_WITNESS_PORT`, where it answers C2SP tlog-witness `POST /add-checkpoint`. */
    readonly port: number;
    /** `WO_WITNESS_DATA_DIR`: its key and its state (SQLite). */
    readonly dataDir: string;
    /** `WO_WITNESS_NAME`: the key name of its cosignatures, fixed when its key is made. */
    readonly name: string | undefined;
  };
  readonly schedules: {
    /** How often each worker looks for schedules whose occurrences came up (`WO_SCHEDULE_INTERVAL_MS`). */
    readonly intervalMs: number;
  };
  readonly idempotency: {
    readonly ttlHours: number;
  };
  readonly rateLimit: {
    /** Requests a minute per API key, and per client address for requests without a valid key; 0 turns limiting off. */
    readonly perMinute: number;
    /** Prefix of the counters' keys in Redis, so that several deployments can share one Redis. */
    readonly redisKeyPrefix: string;
  };
  readonly attachments: {
    /** Largest file an upload may carry (413 beyond). */
    readonly maxBytes: number;
  };
  /** The job page of access links (`/job/{token}`): its request budgets per 15-minute window, shared by every process through the database. */
  readonly jobPage: {
    /** Requests one access link may make (`WO_JOB_PAGE_REQUESTS_PER_LINK`). */
    readonly requestsPerLink: number;
    /** Requests one client address may make, to any link or none (`WO_JOB_PAGE_REQUESTS_PER_ADDRESS`). */
    readonly requestsPerAddress: number;
  };
  /** The public intake form (`/intake/{token}`): what a submission must spend, per 15-minute window, shared by every process through the database. */
  readonly intake: {
    /** Submissions one intake link may take (`WO_INTAKE_SUBMISSIONS_PER_LINK`). */
    readonly submissionsPerLink: number;
    /** Submissions one client address may send, to any link or none (`WO_INTAKE_SUBMISSIONS_PER_ADDRESS`). */
    readonly submissionsPerAddress: number;
    /** The proof-of-work's largest secret number (`WO_INTAKE_POW_MAX_NUMBER`): a browser tries half of them on average. */
    readonly proofOfWorkMaxNumber: number;
  };
  /**
   * How much V8 lets the old generation grow past what the last full GC kept, in percent (V8's
   * `--heap-growing-percent`), for the long-running commands; 0 leaves V8's own factor (up to 4×).
   */
  readonly heapGrowingPercent: number;
  /** What client commands (`wo listen`) read: they call the API over HTTP, not the database. */
  readonly client: {
    /** `WO_API_KEY`: the API key they send when no `--api-key` is given. */
    readonly apiKey: string | undefined;
  };
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

/**
 * WO_TSA_URL with WO_TSA_ROOTS, or neither. @NOTE: a URL without roots is refused rather than run
 * unchecked: a token whose signer chains to nothing we trust bounds nothing, so the service would
 * store tokens anyone could have made.
 */
function readTimestampAuthority(env: Env): Config['proofs']['timestampAuthority'] {
  const url = env.WO_TSA_URL?.trim();
  const roots = env.WO_TSA_ROOTS?.trim();
  if (!url && !roots) return undefined;
  if (!url) throw new ConfigError('WO_TSA_ROOTS is set without WO_TSA_URL: set both (the TSA to ask, and a PEM file of the roots its certificate must chain to), or neither');
  if (!roots) throw new ConfigError('WO_TSA_URL is set without WO_TSA_ROOTS: give a PEM file of the roots the TSA\'s certificate must chain to');
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || !/^https?:$/.test(parsed.protocol)) throw new ConfigError(`WO_TSA_URL must be an absolute http(s) URL of an RFC 3161 TSA, got "${url}"`);
  return Object.freeze({ url: parsed.toString(), rootsFile: path.resolve(roots) });
}

/** `*`, or a comma list of origins (`https://app.example.com`: scheme, host and port only). */
function readCorsOrigins(env: Env): Config['corsOrigins'] {
  const raw = env.WO_CORS_ORIGINS?.trim();
  if (!raw) return undefined;
  if (raw === '*') return '*';
  const origins = raw.split(',').map((entry) => entry.trim()).filter(Boolean);
  for (const origin of origins) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !/^https?:$/.test(parsed.protocol) || parsed.origin !== origin) {
      throw new ConfigError(`WO_CORS_ORIGINS must be * or a comma list of origins such as https://app.example.com (no path, no trailing slash), got "${origin}"`);
    }
  }
  return Object.freeze(origins);
}

/**
 * `WO_DATABASE_POOL_SIZE`, else the `max` parameter of DATABASE_URL (what node-postgres users write),
 * else 10. Both set to different sizes is refused rather than one silently ignored.
 */
function readPoolSize(env: Env, databaseUrl: string | undefined): number {
  const fromEnv = env.WO_DATABASE_POOL_SIZE?.trim() ? readInteger(env, 'WO_DATABASE_POOL_SIZE', 10, 1, 1000) : undefined;
  let fromUrl: string | null = null;
  try {
    fromUrl = databaseUrl ? new URL(databaseUrl).searchParams.get('max') : null;
  } catch {
    // node-postgres parses what URL cannot; such a URL simply carries no `max` we can read.
  }
  if (fromUrl === null) return fromEnv ?? 10;
  const urlParameter = 'the max parameter of DATABASE_URL';
  const urlSize = readInteger({ [urlParameter]: fromUrl }, urlParameter, 10, 1, 1000);
  if (fromEnv !== undefined && fromEnv !== urlSize) {
    throw new ConfigError(`WO_DATABASE_POOL_SIZE (${fromEnv}) and the max parameter of DATABASE_URL (${urlSize}) disagree: set one`);
  }
  return urlSize;
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
  const database = {
    poolSize: readPoolSize(env, databaseUrl),
    poolWaitMs: readInteger(env, 'WO_DATABASE_POOL_WAIT_MS', 5000, 1, 600_000),
    statementTimeoutMs: readInteger(env, 'WO_DATABASE_STATEMENT_TIMEOUT_MS', 30_000, 0, 86_400_000),
  };
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
    workerPort: readInteger(env, 'WO_WORKER_PORT', 8081, 0, 65535),
    shutdownDrainMs: readInteger(env, 'WO_SHUTDOWN_DRAIN_MS', 5000, 0, 600_000),
    bodyIdleTimeoutMs: readInteger(env, 'WO_BODY_IDLE_TIMEOUT_MS', 60_000, 1_000, 3_600_000),
    dataDir,
    databaseUrl,
    database,
    redisUrl,
    publicUrl,
    logLevel,
    trustProxy,
    corsOrigins: readCorsOrigins(env),
    keysDir: path.resolve(env.WO_KEYS_DIR?.trim() || path.join(dataDir, 'keys')),
    webhooks: {
      allowPrivateUrls: readBoolean(env, 'WO_WEBHOOK_ALLOW_PRIVATE_URLS', false),
      // 5, 20 and 80 min: the contract's 4 attempts outlast more than an hour of receiver downtime.
      retryBaseMs: readInteger(env, 'WO_WEBHOOK_RETRY_BASE_MS', 300_000, 1, 86_400_000),
      retryFactor: readInteger(env, 'WO_WEBHOOK_RETRY_FACTOR', 4, 1, 10),
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
      batchIntervalMs: readInteger(env, 'WO_PROOF_BATCH_INTERVAL_MS', 250, 10, 60_000),
      logOrigin: env.WO_LOG_ORIGIN?.trim() || `${new URL(publicUrl).host}/work-orders/log`,
      witnessPolicyFile: env.WO_WITNESS_POLICY?.trim() ? path.resolve(env.WO_WITNESS_POLICY.trim()) : undefined,
      witnessFailOpen: readBoolean(env, 'WO_WITNESS_FAIL_OPEN', false),
      witnessTimeoutMs: readInteger(env, 'WO_WITNESS_TIMEOUT_MS', 5_000, 100, 120_000),
      timestampAuthority: readTimestampAuthority(env),
    },
    witness: {
      port: readInteger(env, 'WO_WITNESS_PORT', 8082, 0, 65535),
      dataDir: path.resolve(env.WO_WITNESS_DATA_DIR?.trim() || './witness-data'),
      name: env.WO_WITNESS_NAME?.trim() || undefined,
    },
    schedules: { intervalMs: readInteger(env, 'WO_SCHEDULE_INTERVAL_MS', 5_000, 50, 600_000) },
    idempotency: { ttlHours: 24 },
    rateLimit: {
      perMinute: readInteger(env, 'WO_RATE_LIMIT_PER_MINUTE', 6000, 0, 6_000_000),
      redisKeyPrefix: env.WO_RATE_LIMIT_REDIS_PREFIX?.trim() || 'wo:rate',
    },
    attachments: { maxBytes: readInteger(env, 'WO_ATTACHMENT_MAX_BYTES', 25 * 1024 * 1024, 1, 1024 * 1024 * 1024) },
    jobPage: {
      requestsPerLink: readInteger(env, 'WO_JOB_PAGE_REQUESTS_PER_LINK', 300, 1, 1_000_000),
      requestsPerAddress: readInteger(env, 'WO_JOB_PAGE_REQUESTS_PER_ADDRESS', 600, 1, 1_000_000),
    },
    intake: {
      submissionsPerLink: readInteger(env, 'WO_INTAKE_SUBMISSIONS_PER_LINK', 100, 1, 1_000_000),
      submissionsPerAddress: readInteger(env, 'WO_INTAKE_SUBMISSIONS_PER_ADDRESS', 10, 1, 1_000_000),
      proofOfWorkMaxNumber: readInteger(env, 'WO_INTAKE_POW_MAX_NUMBER', 50_000, 1_000, 10_000_000),
    },
    heapGrowingPercent: readInteger(env, 'WO_HEAP_GROWING_PERCENT', 50, 0, 1000),
    client: { apiKey: env.WO_API_KEY?.trim() || undefined },
    ...overrides,
  };
  return Object.freeze(config);
}
