import type { Bracketed, LoadFigures } from './load.js';
import { round } from './load.js';
import type { PostgresServerInfo } from '../postgres/observer.js';
import type { WaitSummary } from '../postgres/wait-samples.js';

/** One line of the final table. Load measurements carry req/s; others (deliveries/s, bytes) say their unit. */
export interface Measurement {
  name: string;
  value: number | null;
  unit: string;
  connections?: number;
  p50Ms?: number | null;
  p99Ms?: number | null;
  baselineReqPerSec?: number | null;
  /** When the baseline bracketed this measurement (Baseline.around): its req/s before and after. */
  baselineBracket?: { before: number; after: number };
  ratio?: number | null;
  errors?: number;
  non2xx?: number;
  /** Server CPU per request in µs: robust to a busy machine, unlike req/s. */
  cpuUsPerReq?: number;
  note?: string;
  /** PostgreSQL runs: how many API processes shared the load (cpuUsPerReq is their sum). */
  apiProcesses?: number;
  /** PostgreSQL runs: CPU of the PostgreSQL processes per request (or per delivery), in µs. */
  postgresCpuUsPerReq?: number;
  /** PostgreSQL runs: what the bench database's active backends waited on while it ran. */
  waits?: WaitSummary;
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
  /** Set by the PostgreSQL parts (absent: the embedded SQLite database). */
  database?: 'postgres';
  postgres?: PostgresServerInfo;
}

/** The bare node:http req/s the issue's absolute targets were set on ("about 85–90k req/s"). */
export const ISSUE_BASELINE_REQ_PER_SEC = 87_500;

/**
 * For a target in absolute units (deliveries/s, completions/s): what this run's figure would be on
 * the machine the issue measured, scaled by the baseline. Informational and rough: the baseline is
 * the one the part measured when it started, minutes before the figure on a machine whose speed
 * drifts by tens of percent within minutes; the target is still checked against the figure as measured.
 */
export function machineSpeedNote(what: string, value: number, unit: string, baseline: LoadFigures): string {
  const speed = baseline.reqPerSec / ISSUE_BASELINE_REQ_PER_SEC;
  return (
    `${what}: this run's baseline answered ${Math.round(baseline.reqPerSec)} req/s at ${baseline.connections} connections, ` +
    `${Math.round(speed * 100)} % of the ~87,500 the issue's targets were set on; scaled by it, ${value} ${unit} here ` +
    `corresponds to roughly ${Math.round(value / speed)} ${unit} there (a guide for reading across runs, from the baseline measured at the part's start; the target is checked as measured)`
  );
}

/**
 * The bare node:http req/s behind the PostgreSQL issue's figures (issue 22), read off its own table:
 * req/s ÷ ratio is 54,468 for create on one API process (512 ÷ 0.0094), 54,630 for the SQLite create
 * (5,900 ÷ 0.108), 53,684 and 54,650 for list 100k. Its two absolute targets (deliveries/s,
 * completions/s) were set on that machine; divided by it they are ratios like the issue's others.
 */
export const POSTGRES_ISSUE_BASELINE_REQ_PER_SEC = 54_500;

/**
 * An absolute target of the PostgreSQL issue checked as the issue checks every other one: as a ratio
 * to the baseline measured right before and after, against the target divided by the baseline the
 * issue measured (POSTGRES_ISSUE_BASELINE_REQ_PER_SEC). Reported beside the absolute check, not
 * instead of it.
 */
export function absoluteTargetAsRatio(
  target: string,
  targetPerS: number,
  measured: { value: number; unit: string; baseline: { reqPerSec: number; connections: number }; before: number; after: number },
  complete: boolean,
): TargetCheck {
  const wanted = round(targetPerS / POSTGRES_ISSUE_BASELINE_REQ_PER_SEC, 4);
  const ratio = round(measured.value / measured.baseline.reqPerSec, 4);
  return check(
    `${target} as a ratio: ≥ ${wanted} (${targetPerS.toLocaleString('en')} ÷ the issue's ${POSTGRES_ISSUE_BASELINE_REQ_PER_SEC.toLocaleString('en')} req/s baseline)`,
    `${ratio} (${measured.value} ${measured.unit} ÷ ${Math.round(measured.baseline.reqPerSec)} req/s, the baseline at ${measured.baseline.connections} connections ` +
      `before / after: ${Math.round(measured.before)} / ${Math.round(measured.after)})`,
    complete && ratio >= wanted,
  );
}

/**
 * A latency target of the PostgreSQL issue read on the machine the issue measured. A closed-loop load
 * keeps its connections busy, so its mean latency is connections ÷ throughput (Little's law), and the
 * throughput is the ratio × the baseline: at a given ratio, latency grows as the baseline shrinks. On
 * a machine whose baseline is a third of the issue's, a service at exactly the issue's create ratio of
 * 0.04 would average 50 connections ÷ (0.04 × 18,000 req/s) = 69 ms, over a 50 ms p99 before any tail.
 * Scaling the p99 by this run's baseline ÷ the issue's puts it in the issue's units, as its ratios do
 * for throughput. Reported beside the absolute check, not instead of it.
 */
export function latencyTargetScaled(target: string, targetMs: number, m: Measurement, complete: boolean): TargetCheck {
  if (m.p99Ms == null || !m.baselineReqPerSec) return check(`${target} scaled to the issue's machine`, 'not measured', null);
  const scale = m.baselineReqPerSec / POSTGRES_ISSUE_BASELINE_REQ_PER_SEC;
  const scaled = round(m.p99Ms * scale, 1);
  return check(
    `${target} scaled to the issue's machine: p99 × (this run's baseline ÷ the issue's ${POSTGRES_ISSUE_BASELINE_REQ_PER_SEC.toLocaleString('en')} req/s) ≤ ${targetMs} ms`,
    `${scaled} ms (${m.p99Ms} ms × ${Math.round(m.baselineReqPerSec)} ÷ ${POSTGRES_ISSUE_BASELINE_REQ_PER_SEC.toLocaleString('en')}; ` +
      `mean by Little's law ${round(((m.connections ?? 0) / (m.value ?? Infinity)) * 1000, 1)} ms at ${m.value} req/s)`,
    complete && scaled <= targetMs,
  );
}

/** A load measurement whose ratio is taken against the baseline measured around it. */
export function bracketedMeasurement(name: string, bracketed: Bracketed, note?: string): Measurement {
  return { ...loadMeasurement(name, bracketed.figures, bracketed.baseline, note), baselineBracket: { before: bracketed.before, after: bracketed.after } };
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
