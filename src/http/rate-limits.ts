import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import ipaddr from 'ipaddr.js';
import { AppError } from '../errors.js';
import type { Charge, Partition, RateLimiter, RateLimitOutcome } from '../rate-limits/rate-limiter.js';
import { bearerToken } from './auth.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The token this request took from its bucket, and whose: given back if it is answered 304. */
    rateLimitCharge?: { partition: Partition; charge: Charge };
  }
}

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
 *
 * A request answered 304 Not Modified is free, as GitHub's are: it is charged like any other (an
 * empty bucket refuses it before any work), and its token is given back as the 304 goes out, with
 * the RateLimit field stating the bucket after the refund.
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

  /** Charges, before authentication, the requests no API key will be charged for; gives back the token of a 304. */
  install(app: FastifyInstance): void {
    app.addHook('onReady', () => this.limiter.connect());
    // A callback hook: requests that carry a key (most) pass without a promise.
    app.addHook('onRequest', (request, reply, done) => {
      if (request.routeOptions.config?.scope && bearerToken(request) !== undefined) return done();
      if (UNLIMITED_PATHS.has(request.routeOptions.url ?? '')) return done();
      this.chargeClientAddress(request, reply).then(() => done(), done);
    });
    // A callback hook: only a 304 does anything here.
    app.addHook('onSend', (request, reply, payload, done) => {
      const taken = request.rateLimitCharge;
      if (reply.statusCode !== 304 || !taken) return done(null, payload);
      request.rateLimitCharge = undefined;
      this.limiter.refund(taken.charge).then(
        (outcome) => {
          if (outcome) this.state(reply, taken.partition, outcome);
          done(null, payload);
        },
        () => done(null, payload),
      );
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
    this.state(reply, partition, outcome);
    if (outcome.charge) reply.request.rateLimitCharge = { partition, charge: outcome.charge };
    if (outcome.allowed) return;
    const retryAfter = Math.max(1, Math.ceil(outcome.refillInMs / 1000));
    throw new AppError(
      'rate_limited',
      `${DESCRIBED[partition]} has used its ${this.limiter.policy.capacity} requests for this ${this.limiter.policy.refillSeconds}-second period; retry after ${retryAfter} s.`,
      { headers: { 'retry-after': String(retryAfter) } },
    );
  }

  /** The RateLimit fields of the bucket as `outcome` left it. */
  private state(reply: FastifyReply, partition: Partition, outcome: RateLimitOutcome): void {
    reply.header('ratelimit-policy', this.policies[partition]);
    reply.header('ratelimit', `"${partition}";r=${outcome.remaining};t=${Math.ceil(outcome.refillInMs / 1000)}`);
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
