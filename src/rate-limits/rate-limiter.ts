import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../config.js';

/**
 * Request budgets as token buckets, counted in Redis when `REDIS_URL` is set (shared by every
 * process) and in this process otherwise.
 *
 * Each bucket holds the budget of one refill period (a sixth of the per-minute rate) and is filled
 * up again every REFILL_SECONDS: the sustained rate is exactly the configured one, and a client that
 * was quiet can spend a whole bucket at once. That is rate-limiter-flexible's fixed window, a bucket
 * refilled in one step rather than drop by drop: one atomic Redis command per request, and a state
 * (tokens left, seconds to the refill) that the RateLimit headers can state exactly.
 *
 * @NOTE: Redis being unreachable, or slower than REDIS_COMMAND_TIMEOUT_MS, never fails or holds a
 * request: the request is counted in this process's own buckets instead (so N processes allow up to
 * N budgets while Redis is away), and a warning is logged at most once a minute.
 */

/** How often a bucket is refilled to its capacity. */
export const REFILL_SECONDS = 10;
/** A local Redis answers in well under a millisecond; past this it counts as down for that request. */
const REDIS_COMMAND_TIMEOUT_MS = 200;
/** After a failed command, requests skip Redis this long, so that a Redis that hangs delays one request, not all. */
const REDIS_PAUSE_AFTER_FAILURE_MS = 1_000;
/** Longest wait for Redis when the API starts; it starts anyway (limiting locally) if Redis is not there. */
const REDIS_CONNECT_WAIT_MS = 2_000;
const WARNING_INTERVAL_MS = 60_000;

export type Partition = 'api-key' | 'client-address';

export interface BucketPolicy {
  /** Requests a full bucket allows. */
  readonly capacity: number;
  readonly refillSeconds: number;
}

export function bucketPolicy(perMinute: number): BucketPolicy {
  return { capacity: Math.ceil((perMinute * REFILL_SECONDS) / 60), refillSeconds: REFILL_SECONDS };
}

export interface RateLimitOutcome {
  readonly allowed: boolean;
  /** Requests left in the bucket after this one. */
  readonly remaining: number;
  /** Milliseconds until the bucket is full again. */
  readonly refillInMs: number;
  /** The token taken, which `refund` gives back; absent when none was (a refusal). */
  readonly charge?: Charge;
}

/** A token taken from a bucket: where it was counted, and until when that period's count lasts. */
export interface Charge {
  readonly key: string;
  readonly counter: 'shared' | 'local';
  /** Date.now() at which the bucket is refilled: a token given back later would be one too many. */
  readonly periodEndsAt: number;
}

/**
 * A refund this close to the refill is not made: Redis may have dropped the period's count already
 * (its expiry runs from when Redis saw the first request), and a refund then would start the next
 * period one token over its budget.
 */
const REFUND_MARGIN_MS = 250;

export interface RateLimiterOptions {
  perMinute: number;
  redisUrl: string | undefined;
  /** Prefix of the keys in Redis. */
  keyPrefix: string;
  logger: Pick<Logger, 'warn' | 'info'>;
  metrics: Registry;
}

export class RateLimiter {
  readonly policy: BucketPolicy;
  private readonly local: RateLimiterMemory;
  private readonly redis: Redis | undefined;
  private readonly shared: RateLimiterRedis | undefined;
  private readonly refusals: Counter<'partition'>;
  private readonly localFallbacks: Counter;
  private redisFailing = false;
  private skipRedisUntil = 0;
  private lastWarningAt = -Infinity;
  private fallbacksSinceWarning = 0;

  /** The limiter the configuration asks for; undefined when `WO_RATE_LIMIT_PER_MINUTE` is 0. */
  static fromConfig(config: Config, logger: RateLimiterOptions['logger'], metrics: Registry): RateLimiter | undefined {
    if (config.rateLimit.perMinute === 0) return undefined;
    return new RateLimiter({ perMinute: config.rateLimit.perMinute, redisUrl: config.redisUrl, keyPrefix: config.rateLimit.redisKeyPrefix, logger, metrics });
  }

  constructor(private readonly options: RateLimiterOptions) {
    this.policy = bucketPolicy(options.perMinute);
    const limits = { points: this.policy.capacity, duration: this.policy.refillSeconds, keyPrefix: options.keyPrefix };
    this.local = new RateLimiterMemory(limits);
    if (options.redisUrl) {
      this.redis = new Redis(options.redisUrl, {
        // Connected by connect() when the API starts: the CLI and the worker never open a connection.
        lazyConnect: true,
        // Concurrent requests share one connection; commands issued in the same tick go out in one write.
        enableAutoPipelining: true,
        // Without Redis a command fails at once (and the request is counted locally) instead of queueing.
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
        connectTimeout: REDIS_CONNECT_WAIT_MS,
        retryStrategy: (attempt) => Math.min(attempt * 250, 2_000),
      });
      this.redis.on('error', (error: Error) => this.warnRedisUnavailable(error));
      this.redis.on('ready', () => {
        if (this.redisFailing) options.logger.info('Redis is reachable again: rate limits are shared across processes again');
        this.redisFailing = false;
        this.skipRedisUntil = 0;
      });
      this.shared = new RateLimiterRedis({
        ...limits,
        storeClient: this.redis,
        rejectIfRedisNotReady: true,
        // A bucket found overdrawn is remembered here until its refill, so a client over its budget costs
        // no round trip. Only overdrawn (a refusal), not empty: the last token may still be refunded (a 304).
        inMemoryBlockOnConsumed: this.policy.capacity + 1,
      });
    }
    this.refusals = new Counter({
      name: 'wo_rate_limit_refusals_total',
      help: 'Requests answered 429 because their bucket was empty, by partition (api-key, client-address)',
      labelNames: ['partition'] as const,
      registers: [options.metrics],
    });
    this.localFallbacks = new Counter({
      name: 'wo_rate_limit_local_fallbacks_total',
      help: 'Requests counted in this process only because Redis was unavailable',
      registers: [options.metrics],
    });
  }

  /** Takes one token from the bucket of `id` in `partition`. Never rejects because of Redis. */
  async consume(partition: Partition, id: string): Promise<RateLimitOutcome> {
    const key = `${partition}:${id}`;
    if (this.shared) {
      let failure: unknown;
      if (Date.now() >= this.skipRedisUntil) {
        try {
          return granted(await this.shared.consume(key), key, 'shared');
        } catch (result) {
          if (result instanceof RateLimiterRes) return this.refused(partition, result);
          this.skipRedisUntil = Date.now() + REDIS_PAUSE_AFTER_FAILURE_MS;
          failure = result;
        }
      }
      this.localFallbacks.inc();
      this.fallbacksSinceWarning++;
      if (failure) this.warnRedisUnavailable(failure);
    }
    try {
      return granted(await this.local.consume(key), key, 'local');
    } catch (result) {
      if (result instanceof RateLimiterRes) return this.refused(partition, result);
      throw result;
    }
  }

  /**
   * Gives back the token of `charge` (a request that turned out free: a 304), while the period it was
   * taken in lasts; answers what is left then, or undefined when nothing was given back (the period
   * is over, or Redis failed: the request then simply stays counted).
   */
  async refund(charge: Charge): Promise<RateLimitOutcome | undefined> {
    if (Date.now() >= charge.periodEndsAt - REFUND_MARGIN_MS) return undefined;
    // Redis is failing: this answer does not wait for it again.
    if (charge.counter === 'shared' && Date.now() < this.skipRedisUntil) return undefined;
    const counter = charge.counter === 'shared' ? this.shared : this.local;
    try {
      const result = await counter!.reward(charge.key);
      return { allowed: true, remaining: Math.min(this.policy.capacity, result.remainingPoints), refillInMs: refillIn(result) };
    } catch (error) {
      if (charge.counter !== 'shared') throw error;
      this.skipRedisUntil = Date.now() + REDIS_PAUSE_AFTER_FAILURE_MS;
      this.warnRedisUnavailable(error);
      return undefined;
    }
  }

  /** Opens the Redis connection (the API calls this as it starts); waits for it a short while at most. */
  async connect(): Promise<void> {
    if (this.redis?.status !== 'wait') return;
    const connecting = this.redis.connect().catch(() => {}); // the 'error' listener has logged it; ioredis keeps retrying
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([connecting, new Promise((resolve) => (timer = setTimeout(resolve, REDIS_CONNECT_WAIT_MS)))]);
    clearTimeout(timer);
  }

  async close(): Promise<void> {
    if (!this.redis) return;
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => this.redis?.disconnect());
    else this.redis.disconnect();
  }

  private refused(partition: Partition, result: RateLimiterRes): RateLimitOutcome {
    this.refusals.inc({ partition });
    return { allowed: false, remaining: 0, refillInMs: refillIn(result) };
  }

  private warnRedisUnavailable(error: unknown): void {
    this.redisFailing = true;
    const now = Date.now();
    if (now - this.lastWarningAt < WARNING_INTERVAL_MS) return;
    this.lastWarningAt = now;
    this.options.logger.warn(
      { err: error, requestsCountedLocally: this.fallbacksSinceWarning },
      'Redis is unavailable: rate limits are counted in each process on its own until it is back',
    );
    this.fallbacksSinceWarning = 0;
  }
}

function granted(result: RateLimiterRes, key: string, counter: Charge['counter']): RateLimitOutcome {
  const refillInMs = refillIn(result);
  return { allowed: true, remaining: result.remainingPoints, refillInMs, charge: { key, counter, periodEndsAt: Date.now() + refillInMs } };
}

function refillIn(result: RateLimiterRes): number {
  return Math.max(0, result.msBeforeNext);
}
