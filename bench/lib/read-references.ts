// Issue 51: each read of the service beside the same read done the plainest way
// (bench/reference-reads-server.ts) on the same database, in the same run, in alternating rounds at
// each connection count. The target is the service's req/s over the reference's: at least 0.8.
import type { RequestSpec } from 'autocannon';
import { runLoad, type LoadFigures } from './load.js';
import { startBenchScript } from './processes.js';
import { check, isClean, type Measurement, type TargetCheck } from './results.js';
import { cpuOf } from './ab-rounds.js';

export const READ_TARGET_RATIO = 0.8;
export const READ_CONNECTIONS = [10, 50] as const;
const ROUNDS = 2;

/** One read: its name, and its requests (a fixed path, or one that moves through ids). */
export interface ReadUnderTest {
  name: string;
  requests: (headers: Record<string, string>) => RequestSpec[];
}

/** A fixed GET. */
export function fixedRead(name: string, path: string): ReadUnderTest {
  return { name, requests: (headers) => [{ method: 'GET', path, headers }] };
}

/** GET of each of `paths` in turn, so that no single row stays hot. */
export function rotatingRead(name: string, paths: readonly string[]): ReadUnderTest {
  return {
    name,
    requests: (headers) => {
      let n = 0;
      return [{ method: 'GET', headers, setupRequest: (request) => ({ ...request, path: paths[n++ % paths.length]! }) }];
    },
  };
}

export interface ReadSide {
  url: string | string[];
  headers: Record<string, string>;
  server: { cpuSeconds(): number };
}

export interface ReadComparison {
  label: string;
  reads: readonly ReadUnderTest[];
  service: ReadSide;
  reference: ReadSide;
  /** One load as a measurement (on PostgreSQL, with the database's CPU). */
  measure: (name: string, connections: number, load: () => Promise<LoadFigures>) => Promise<Measurement>;
}

/** The reference reads server on a database: REFERENCE_SQLITE_PATH or REFERENCE_DATABASE_URL. */
export function startReadsReference(env: { REFERENCE_SQLITE_PATH: string } | { REFERENCE_DATABASE_URL: string }) {
  return startBenchScript('reference-reads-server.ts', '/', env);
}

/**
 * Every read at every connection count: both sides warmed up, then ROUNDS alternating rounds
 * (service first, then reference first). A target per read and count: the service's pooled req/s
 * over the reference's.
 */
export async function compareReads(comparison: ReadComparison): Promise<{ measurements: Measurement[]; targets: TargetCheck[] }> {
  const measurements: Measurement[] = [];
  const targets: TargetCheck[] = [];
  const suffix = comparison.label ? `, ${comparison.label}` : '';
  for (const read of comparison.reads) {
    for (const connections of READ_CONNECTIONS) {
      const sides = { service: comparison.service, reference: comparison.reference };
      for (const side of Object.values(sides)) await runLoad({ url: side.url, connections, durationS: 1, requests: read.requests(side.headers) });
      const measured = { service: [] as Measurement[], reference: [] as Measurement[] };
      for (let round = 1; round <= ROUNDS; round++) {
        const order = round % 2 === 1 ? (['service', 'reference'] as const) : (['reference', 'service'] as const);
        for (const name of order) {
          const side = sides[name];
          const title = `round ${round}: ${name === 'reference' ? 'reference (plain Fastify, same database): ' : ''}${read.name}${suffix}, ${connections} connections`;
          measured[name].push(await comparison.measure(title, connections, () => runLoad({ url: side.url, server: side.server, connections, requests: read.requests(side.headers) })));
        }
      }
      measurements.push(...measured.service, ...measured.reference);
      const rate = (ms: Measurement[]) => ms.reduce((sum, m) => sum + (m.value ?? 0), 0) / ms.length;
      const cpu = (ms: Measurement[]) => Math.round(ms.reduce((sum, m) => sum + cpuOf(m), 0) / ms.length);
      const ratio = rate(measured.service) / rate(measured.reference);
      const clean = [...measured.service, ...measured.reference].every(isClean) && Number.isFinite(ratio);
      targets.push(
        check(
          `${read.name}${suffix}, ${connections} connections: ≥ ${READ_TARGET_RATIO} × the reference's req/s`,
          `${ratio.toFixed(2)} × (${Math.round(rate(measured.service))} against ${Math.round(rate(measured.reference))} req/s; CPU ${cpu(measured.service)} against ${cpu(measured.reference)} µs per request)`,
          clean ? ratio >= READ_TARGET_RATIO : null,
        ),
      );
    }
  }
  return { measurements, targets };
}

/** Checks that the reference answers `path` with exactly the service's bytes: the same work, the same JSON. */
export async function sameAnswer(service: ReadSide, reference: ReadSide, path: string): Promise<string | undefined> {
  const read = async (side: ReadSide) => {
    const base = Array.isArray(side.url) ? side.url[0]! : side.url;
    const response = await fetch(`${base}${path}`, { headers: side.headers });
    return `${response.status} ${await response.text()}`;
  };
  const [ours, theirs] = await Promise.all([read(service), read(reference)]);
  return ours === theirs ? undefined : `the reference's answer to ${path} differs from the service's (${ours.length} against ${theirs.length} characters)`;
}
