import type { LoadFigures } from './load.js';
import { round } from './load.js';

/** One line of the final table. Load measurements carry req/s; others (deliveries/s, bytes) say their unit. */
export interface Measurement {
  name: string;
  value: number | null;
  unit: string;
  connections?: number;
  p50Ms?: number | null;
  p99Ms?: number | null;
  baselineReqPerSec?: number | null;
  ratio?: number | null;
  errors?: number;
  non2xx?: number;
  /** Server CPU per request in µs: robust to a busy machine, unlike req/s. */
  cpuUsPerReq?: number;
  note?: string;
}

export interface TargetCheck {
  target: string;
  actual: string;
  /** null: could not be evaluated in this run (feature missing, size not measured). */
  pass: boolean | null;
}

export interface PartResult {
  part: string;
  date: string;
  server: string;
  measurementSeconds: number;
  skipped?: string;
  measurements: Measurement[];
  memory: { process: string; peakRssMb: number; note?: string }[];
  targets: TargetCheck[];
  notes: string[];
  baseline: Record<string, LoadFigures>;
}

export function loadMeasurement(name: string, figures: LoadFigures, baseline: LoadFigures | null, note?: string): Measurement {
  return {
    name,
    value: figures.reqPerSec,
    unit: 'req/s',
    connections: figures.connections,
    p50Ms: figures.p50Ms,
    p99Ms: figures.p99Ms,
    baselineReqPerSec: baseline?.reqPerSec ?? null,
    ratio: baseline ? round(figures.reqPerSec / baseline.reqPerSec, 4) : null,
    errors: figures.errors,
    non2xx: figures.non2xx,
    ...(figures.serverCpuUsPerReq !== undefined ? { cpuUsPerReq: figures.serverCpuUsPerReq } : {}),
    ...(note ? { note } : {}),
  };
}

/** A measurement whose answers were not all 2xx proves nothing about speed; the table flags it. */
export function isClean(m: Measurement): boolean {
  return (m.errors ?? 0) === 0 && (m.non2xx ?? 0) === 0;
}

export function check(target: string, actual: string, pass: boolean | null): TargetCheck {
  return { target, actual, pass };
}

export function skippedPart(part: string, reason: string, server: string, seconds: number): PartResult {
  return { part, date: new Date().toISOString(), server, measurementSeconds: seconds, skipped: reason, measurements: [], memory: [], targets: [], notes: [], baseline: {} };
}
