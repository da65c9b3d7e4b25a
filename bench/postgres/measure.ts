import type { Baseline, LoadFigures } from '../lib/load.js';
import { bracketedMeasurement, loadMeasurement, type Measurement } from '../lib/results.js';
import type { PostgresCost, PostgresObserver } from './observer.js';

/** A measurement with PostgreSQL's CPU per request (or per delivery) and the waits seen while it ran. */
export function withPostgresCost(measurement: Measurement, requests: number, cost: PostgresCost, apiProcesses?: number): Measurement {
  return {
    ...measurement,
    ...(apiProcesses === undefined ? {} : { apiProcesses }),
    ...(requests > 0 ? { postgresCpuUsPerReq: Math.round((cost.cpuSeconds * 1e6) / requests) } : {}),
    waits: cost.waits,
  };
}

export interface PostgresLoad {
  name: string;
  connections: number;
  /** API processes that served it (absent for a reference server). */
  apiProcesses?: number;
  /** A ratio target depends on it: measure the baseline right before and after (Baseline.around). */
  bracket?: boolean;
  load: () => Promise<LoadFigures>;
}

/** One load measurement on PostgreSQL, watched by `observer`, as a ratio to the baseline. */
export async function measureOnPostgres(observer: PostgresObserver, baseline: Baseline, spec: PostgresLoad): Promise<Measurement> {
  let cost: PostgresCost | undefined;
  const observed = async () => {
    const watched = await observer.during(spec.load);
    cost = watched.cost;
    return watched.result;
  };
  if (spec.bracket) {
    const bracketed = await baseline.around(spec.connections, observed);
    return withPostgresCost(bracketedMeasurement(spec.name, bracketed), bracketed.figures.requests, cost!, spec.apiProcesses);
  }
  const figures = await observed();
  return withPostgresCost(loadMeasurement(spec.name, figures, await baseline.at(spec.connections)), figures.requests, cost!, spec.apiProcesses);
}
