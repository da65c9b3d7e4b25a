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
export function startReadsReference(env: ({ REFERENCE_SQLITE_PATH: string } | { REFERENCE_DATABASE_URL: string }) & { REFERENCE_VERIFIER_KEY?: string }) {
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

/** A side with several processes behind it (its URLs, one per process), for compareScaling. */
export interface ScaledSide {
  urls: string[];
  headers: Record<string, string>;
  server: { cpuSeconds(): number };
}

/**
 * Issue 51, PostgreSQL: what a second API process does to a read's throughput, against what a second
 * reference process does to the reference's. Both sides run all their processes throughout; a round loads
 * the first process alone, then all of them (the same connections dealt out), for the service and then
 * the reference (the other way round every other round). Target (issue 51): the second process lowers the
 * service's throughput by no more than the reference's second process lowers the reference's.
 */
export async function compareScaling(
  name: string,
  path: string,
  sides: { service: ScaledSide; reference: ScaledSide },
  measure: ReadComparison['measure'],
): Promise<{ measurements: Measurement[]; target: TargetCheck }> {
  const connections = READ_CONNECTIONS[0];
  const counts = [1, Math.min(sides.service.urls.length, sides.reference.urls.length)] as const;
  const measured = { service: [[], []] as Measurement[][], reference: [[], []] as Measurement[][] };
  for (const side of Object.values(sides)) await runLoad({ url: side.urls, connections, durationS: 1, path, headers: side.headers });
  for (let round = 1; round <= ROUNDS; round++) {
    const order = round % 2 === 1 ? (['service', 'reference'] as const) : (['reference', 'service'] as const);
    for (const sideName of order) {
      const side = sides[sideName];
      for (const [i, count] of counts.entries()) {
        const urls = side.urls.slice(0, count);
        const title = `round ${round}: ${sideName === 'reference' ? 'reference (plain Fastify, same database): ' : ''}${name}, ${count} process${count === 1 ? '' : 'es'} loaded`;
        measured[sideName][i]!.push(await measure(title, connections, () => runLoad({ url: urls, server: side.server, connections, path, headers: side.headers })));
      }
    }
  }
  const rate = (ms: Measurement[]) => ms.reduce((sum, m) => sum + (m.value ?? 0), 0) / ms.length;
  const kept = (side: 'service' | 'reference') => rate(measured[side][1]!) / rate(measured[side][0]!);
  const all = [...measured.service.flat(), ...measured.reference.flat()];
  const clean = all.every(isClean) && Number.isFinite(kept('service')) && Number.isFinite(kept('reference'));
  const figures = (side: 'service' | 'reference') => `${Math.round(rate(measured[side][0]!))} → ${Math.round(rate(measured[side][1]!))} req/s (${((kept(side) - 1) * 100).toFixed(0)} %)`;
  // Issue 51's words: the second process may lower throughput no more than the reference's second lowers
  // its own. A gain lowers nothing; the figures show which side gained more.
  const loss = (side: 'service' | 'reference') => Math.max(0, 1 - kept(side));
  return {
    measurements: all,
    target: check(
      `${name}, ${connections} connections: a second process lowers throughput by no more than the reference's second process lowers its own`,
      `service ${figures('service')}; reference ${figures('reference')}`,
      clean ? loss('service') <= loss('reference') : null,
    ),
  };
}

/**
 * Issue 51, "answers are byte-identical": each of `paths` read from the service and from the reference
 * (whose JSON is the plain toWorkOrder + JSON.stringify the service's faster paths must match), a few at a
 * time. The paths that differ, with the first difference of the first, if any.
 */
export async function diffAnswers(service: ReadSide, reference: ReadSide, paths: readonly string[]): Promise<{ compared: number; differing: string[]; first?: string }> {
  const differing: string[] = [];
  let first: string | undefined;
  let next = 0;
  const worker = async () => {
    while (next < paths.length) {
      const path = paths[next++]!;
      const [ours, theirs] = await Promise.all([answerOf(service, path), answerOf(reference, path)]);
      if (ours === theirs) continue;
      differing.push(path);
      if (!first) {
        const at = [...ours].findIndex((char, i) => char !== theirs[i]);
        first = `${path}: at character ${at}, the service has ${JSON.stringify(ours.slice(at, at + 60))}, the reference ${JSON.stringify(theirs.slice(at, at + 60))}`;
      }
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  return { compared: paths.length, differing, ...(first ? { first } : {}) };
}

/** An answer as its status and body text. */
async function answerOf(side: ReadSide, path: string): Promise<string> {
  const base = Array.isArray(side.url) ? side.url[0]! : side.url;
  const response = await fetch(`${base}${path}`, { headers: side.headers });
  return `${response.status} ${await response.text()}`;
}

/** Checks that the reference answers `path` with exactly the service's bytes: the same work, the same JSON. */
export async function sameAnswer(service: ReadSide, reference: ReadSide, path: string): Promise<string | undefined> {
  const [ours, theirs] = await Promise.all([answerOf(service, path), answerOf(reference, path)]);
  return ours === theirs ? undefined : `the reference's answer to ${path} differs from the service's (${ours.length} against ${theirs.length} characters)`;
}
