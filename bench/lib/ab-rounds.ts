// Two paths compared by server CPU per request (on PostgreSQL, the API's plus PostgreSQL's) in the
// same run, in alternating rounds (A B, B A, A B) because this machine's speed drifts; a target is
// the median of the rounds' ratios. Shared by the parts whose targets are such ratios (costs, checklists).
import type { RequestSpec } from 'autocannon';
import { runLoad, type LoadFigures } from './load.js';
import type { ApiTarget } from './processes.js';
import { check, isClean, type Measurement, type TargetCheck } from './results.js';
import type { Tenant } from './tenant.js';

export const AB_ROUNDS = 3;

/** Where a comparison measures: the API processes, and how one load becomes a measurement there (with PostgreSQL's CPU when it runs there). */
export interface AbRun {
  api: ApiTarget;
  measure: (name: string, load: () => Promise<LoadFigures>) => Promise<Measurement>;
}

export interface Path {
  name: string;
  requests: () => RequestSpec[];
}

export const cpuOf = (m: Measurement) => (m.cpuUsPerReq ?? NaN) + (m.postgresCpuUsPerReq ?? 0);

/** CPU per request over every round of a path: each round weighted by its requests (the rounds last equally long). */
export function pooledCpu(rounds: Measurement[]): number {
  const requests = rounds.reduce((sum, m) => sum + (m.value ?? 0), 0);
  return Math.round(rounds.reduce((sum, m) => sum + cpuOf(m) * (m.value ?? 0), 0) / requests);
}

/** Two paths, each warmed up once, then measured in `rounds` alternating rounds at `connections`. */
export async function comparePaths(run: AbRun, a: Path, b: Path, connections: number, rounds = AB_ROUNDS): Promise<{ a: Measurement[]; b: Measurement[] }> {
  const url = run.api.urls ?? run.api.baseUrl;
  for (const p of [a, b]) await runLoad({ url, connections, durationS: 2, requests: p.requests() });
  const measured = { a: [] as Measurement[], b: [] as Measurement[] };
  for (let round = 1; round <= rounds; round++) {
    for (const side of alternating(round)) {
      const p = side === 'a' ? a : b;
      measured[side].push(await run.measure(`round ${round}: ${p.name}`, () => runLoad({ url, server: run.api, connections, requests: p.requests() })));
    }
  }
  return measured;
}

/** Which side goes first in a round: A in the odd ones, B in the even ones. */
export function alternating(round: number): readonly ['a', 'b'] | readonly ['b', 'a'] {
  return round % 2 === 1 ? (['a', 'b'] as const) : (['b', 'a'] as const);
}

/** The median of some figures (the middle one of an odd count, the upper middle of an even one). */
export function median(values: readonly number[]): number {
  return [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
}

/**
 * The target's ratio is the median of the rounds' ratios, each taken between two measurements run
 * back to back: on this shared machine one round of a pair can land in a burst of other work (a
 * GET measured 1.86× and then 0.89× its pair in consecutive rounds), which a ratio of CPU pooled
 * over the rounds would carry whole. The pooled figures are shown beside it.
 */
export function ratioTarget(target: string, limit: number, a: Measurement[], b: Measurement[], labels: [string, string]): TargetCheck {
  const perRound = a.map((m, i) => cpuOf(m) / cpuOf(b[i]!));
  const ratio = median(perRound);
  return check(
    `${target}: ≤ ${limit} × the CPU per request (median of ${perRound.length} rounds)`,
    `${ratio.toFixed(2)} × (rounds ${perRound.map((r) => r.toFixed(2)).join(', ')}; pooled ${labels[0]} ${pooledCpu(a)} µs against ${labels[1]} ${pooledCpu(b)} µs)`,
    [...a, ...b].every(isClean) && Number.isFinite(ratio) ? ratio <= limit : null,
  );
}

/** GETs of `pathOf(offset)` walking offsets 0, `page`, 2 × `page`, … through `rows` and round again, shared by every connection. */
export function walk(tenant: Tenant, rows: number, page: number, pathOf: (offset: number) => string): () => RequestSpec[] {
  return () => {
    let next = 0;
    return [
      {
        method: 'GET',
        setupRequest: (request) => {
          const offset = next;
          next = (next + page) % rows;
          return { ...request, path: pathOf(offset), headers: tenant.readHeaders };
        },
      },
    ];
  };
}
