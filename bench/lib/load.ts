import autocannon, { type Options, type RequestSpec } from 'autocannon';
import { startBenchScript } from './processes.js';

/** Seconds per measurement: BENCH_DURATION_S (default 10) lets a quick run prove the harness works. */
export function measurementSeconds(): number {
  const raw = Number(process.env.BENCH_DURATION_S ?? 10);
  return Number.isFinite(raw) && raw > 0 ? raw : 10;
}

/**
 * Seconds of warm-up, with the load about to be measured, before a measurement on processes started
 * for it (the PostgreSQL parts start theirs for each API-process count): as long as a measurement,
 * as the SQLite parts' 50-connection figures already follow 12 s of load. The first seconds of a
 * process are spent compiling (the JIT) and filling caches: the lifecycle mix on PostgreSQL measured
 * API 542 / 478 / 373 / 419 µs and worker 168 / 120 / 84 / 97 µs per request in four 10-s rounds back
 * to back after a 2-s warm-up (bench/tools/lifecycle-cost.ts, session 16).
 */
export function warmUpSeconds(): number {
  return measurementSeconds();
}

export interface LoadFigures {
  connections: number;
  durationS: number;
  requests: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
  /** CPU time the measured server process spent per request (µs), when the process was given. */
  serverCpuUsPerReq?: number;
}

export interface LoadOptions {
  /** One server, or several processes of one service: the connections are dealt out among them in turn. */
  url: string | string[];
  connections: number;
  durationS?: number;
  amount?: number;
  overallRate?: number;
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  requests?: RequestSpec[];
}

/** One autocannon run against 127.0.0.1, reduced to the figures every table shows. */
export async function runLoad(options: LoadOptions & { server?: { cpuSeconds(): number } }): Promise<LoadFigures> {
  const cpuBefore = options.server?.cpuSeconds();
  const settings: Options = {
    // autocannon takes the path of a single request from the URL (its `path` option is ignored then).
    url: options.path ? withPath(options.url, options.path) : options.url,
    connections: options.connections,
    pipelining: 1,
    timeout: 30,
    ...(options.amount ? { amount: options.amount } : { duration: options.durationS ?? measurementSeconds() }),
    ...(options.overallRate ? { overallRate: options.overallRate } : {}),
    ...(options.method ? { method: options.method } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
    ...(options.body ? { body: options.body } : {}),
    ...(options.requests ? { requests: options.requests } : {}),
  };
  const result = await autocannon(settings);
  const requests = result.requests.total;
  const cpuUsed = options.server && cpuBefore !== undefined ? options.server.cpuSeconds() - cpuBefore : NaN;
  return {
    connections: options.connections,
    durationS: result.duration,
    requests,
    // total / elapsed rather than the mean of per-second samples: short runs have partial first and last seconds.
    reqPerSec: round(requests / result.duration),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    ...(Number.isFinite(cpuUsed) && requests > 0 ? { serverCpuUsPerReq: Math.round((cpuUsed * 1e6) / requests) } : {}),
  };
}

function withPath(url: string | string[], path: string): string | string[] {
  return Array.isArray(url) ? url.map((u) => `${u}${path}`) : `${url}${path}`;
}

export function round(value: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** A measurement and the baseline bracketing it (see `Baseline.around`). */
export interface Bracketed {
  figures: LoadFigures;
  /** The baseline measured before, with reqPerSec replaced by the mean of before and after (its latencies are the before run's). */
  baseline: LoadFigures;
  before: number;
  after: number;
}

/**
 * The bare node:http ceiling, measured with the same connection count and duration, in a fresh
 * child process, and cached per connection count for the rest of the part.
 */
export class Baseline {
  private readonly figures = new Map<number, LoadFigures>();

  async at(connections: number): Promise<LoadFigures> {
    const known = this.figures.get(connections);
    if (known) return known;
    const measured = await Baseline.measure(connections);
    this.figures.set(connections, measured);
    return measured;
  }

  /**
   * For a measurement with a ratio target: the baseline measured right before and right after it,
   * and the ratio taken against their mean. This machine's speed drifts by tens of percent within
   * minutes (the same baseline measured 52k and 63k req/s in one run), and a baseline cached at the
   * start of a part can be minutes old by the time its measurement runs (the 1M list comes after
   * seeding a million rows), so the ratio compared two different machines.
   */
  async around(connections: number, measure: () => Promise<LoadFigures>): Promise<Bracketed> {
    const { result: figures, baseline, before, after } = await this.bracket(connections, measure);
    return { figures, baseline, before, after };
  }

  /** `around` for any measurement (a rate of deliveries or completions rather than a load's figures). */
  async bracket<T>(connections: number, measure: () => Promise<T>): Promise<{ result: T; baseline: LoadFigures; before: number; after: number }> {
    const before = await Baseline.measure(connections);
    const result = await measure();
    const after = await Baseline.measure(connections);
    const reqPerSec = round((before.reqPerSec + after.reqPerSec) / 2);
    // The part's cached figure stays the first one measured, for the measurements without a target.
    if (!this.figures.has(connections)) this.figures.set(connections, before);
    return { result, baseline: { ...before, reqPerSec }, before: before.reqPerSec, after: after.reqPerSec };
  }

  /** The baseline measured now, not cached: for a caller that brackets a measurement it cannot wrap in `bracket`. */
  fresh(connections: number): Promise<LoadFigures> {
    return Baseline.measure(connections);
  }

  private static async measure(connections: number): Promise<LoadFigures> {
    const server = await startBenchScript('baseline-server.ts');
    try {
      await runLoad({ url: server.baseUrl, connections, durationS: 1 }); // warm-up: JIT and sockets
      return await runLoad({ url: server.baseUrl, connections, server });
    } finally {
      await server.stop();
    }
  }

  all(): Record<string, LoadFigures> {
    return Object.fromEntries([...this.figures].map(([c, f]) => [`c${c}`, f]));
  }
}
