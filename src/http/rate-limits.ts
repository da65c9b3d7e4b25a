import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import ipaddr from 'ipaddr.js';
import { AppError } from '../errors.js';
import type { Partition, RateLimiter } from '../rate-limits/rate-limiter.js';
import { bearerToken } from './auth.js';

/** What a load balancer or Prometheus polls: never limited, or a busy balancer would take the instance out. */
export const UNLIMITED_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

const DESCRIBED: Record<Partition, string> = { 'api-key': 'This API key', 'client-address': 'This client address' };

/**
 * Charges every request to a bucket (src/rate-limits/rate-limiter.ts) and states it in the IETF
 * RateLimit fields (draft-ietf-httpapi-ratelimit-headers-11): `RateLimit-Policy: "api-key";q=1000;w=10`
 * (a full bucket, and its refill period in seconds) and `RateLimit: "api-key";r=997;t=4` (requests
 * left, seconds until the refill). An empty bucket answers 429 `rate_limited` with `Retry-After`.
 *
 * Requests authenticated by an API key are charged to the key (by `installAuthentication`, once it
 * knows the key); all others, failed authentications included, to the client's address (the
 * proxy-forwarded one under `WO_TRUST_PROXY`; an IPv6 client's whole /64, which one host may hold).
 */
export class RequestRateLimits {
  private readonly policies: Record<Partition, string>;

  constructor(private readonly limiter: RateLimiter) {
    const { capacity, refillSeconds } = limiter.policy;
    this.policies = {
      'api-key': `"api-key";q=${capacity};w=${refillSeconds}`,
      'client-address': `"client-address";q=${capacity};w=${refillSeconds}`,
    };
  }

  /** Charges, before authentication, the requests no API key will be charged for. */
  install(app: FastifyInstance): void {
    app.addHook('onReady', () => this.limiter.connect());
    // A callback hook: requests that carry a key (most) pass without a promise.
    app.addHook('onRequest', (request, reply, done) => {
      if (request.routeOptions.config?.scope && bearerToken(request) !== undefined) return done();
      if (UNLIMITED_PATHS.has(request.routeOptions.url ?? '')) return done();
      this.chargeClientAddress(request, reply).then(() => done(), done);
    });
  }

  chargeApiKey(reply: FastifyReply, keyId: string): Promise<void> {
    return this.charge(reply, 'api-key', keyId);
  }

  chargeClientAddress(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    return this.charge(reply, 'client-address', clientAddressBucket(request.ip));
  }

  private async charge(reply: FastifyReply, partition: Partition, id: string): Promise<void> {
    const outcome = await this.limiter.consume(partition, id);
    const seconds = Math.ceil(outcome.refillInMs / 1000);
    reply.header('ratelimit-policy', this.policies[partition]);
    reply.header('ratelimit', `"${partition}";r=${outcome.remaining};t=${seconds}`);
    if (outcome.allowed) return;
    const retryAfter = Math.max(1, seconds);
    throw new AppError(
      'rate_limited',
      `${DESCRIBED[partition]} has used its ${this.limiter.policy.capacity} requests for this ${this.limiter.policy.refillSeconds}-second period; retry after ${retryAfter} s.`,
      { headers: { 'retry-after': String(retryAfter) } },
    );
  }
}

/** The bucket of a client address: IPv4 as is, IPv6 by its /64 (one host often holds a whole /64). */
export function clientAddressBucket(ip: string): string {
  if (!ip.includes(':')) return ip;
  try {
    const address = ipaddr.process(ip);
    if (address.kind() === 'ipv4') return address.toString();
    return `${(address as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16)).join(':')}::/64`;
  } catch {
    return ip;
  }
}
