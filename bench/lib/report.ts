import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { REPO_ROOT } from './processes.js';
import type { Measurement, PartResult } from './results.js';
import { isClean } from './results.js';
import { postgresDocSection } from '../postgres/report-section.js';

export const RESULTS_DIR = path.join(REPO_ROOT, 'bench', 'results');
export const PART_ORDER = ['create', 'list', 'lifecycle', 'webhooks', 'proofs', 'witness', 'schedules', 'soak', 'costs', 'checklists', 'requests', 'downloads'];

export interface MachineInfo {
  cpu: string;
  cores: number;
  memoryGb: number;
  node: string;
  sqlite: string;
  os: string;
}

export function machineInfo(): MachineInfo {
  const db = new SqliteDatabase(':memory:');
  const sqlite = (db.prepare('select sqlite_version() as v').get() as { v: string }).v;
  db.close();
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    memoryGb: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    sqlite,
    os: `${os.type()} ${os.release()}`,
  };
}

/** A part's saved result: PostgreSQL runs beside the SQLite ones, under a prefix (`postgres-create.json`). */
function resultFile(part: string, database: PartResult['database']): string {
  return path.join(RESULTS_DIR, `${database === 'postgres' ? 'postgres-' : ''}${part}.json`);
}

export function writePartResult(result: PartResult, machine: MachineInfo): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = resultFile(result.part, result.database);
  writeFileSync(file, `${JSON.stringify({ machine, ...result }, null, 2)}\n`);
  return file;
}

/** Every part's latest saved result on one database (SQLite unless named), in the documented order. */
export function readAllResults(database?: PartResult['database']): (PartResult & { machine?: MachineInfo })[] {
  if (!existsSync(RESULTS_DIR)) return [];
  const parts = readdirSync(RESULTS_DIR)
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(readFileSync(path.join(RESULTS_DIR, f), 'utf8')) as PartResult & { machine?: MachineInfo })
    .filter((r) => r.database === database);
  return parts.sort((a, b) => PART_ORDER.indexOf(a.part) - PART_ORDER.indexOf(b.part));
}

export const fmt = (n: number | null | undefined, digits = 1) => (n === null || n === undefined || Number.isNaN(n) ? '–' : n.toFixed(digits));

export function rowCells(part: string, m: Measurement): string[] {
  const flag = isClean(m) ? '' : ` ⚠ ${m.errors ?? 0} errors, ${m.non2xx ?? 0} non-2xx`;
  return [
    part,
    m.name + flag,
    m.connections === undefined ? '' : String(m.connections),
    `${fmt(m.value, m.unit === 'req/s' ? 0 : 1)} ${m.unit}`,
    fmt(m.p50Ms),
    fmt(m.p99Ms),
    m.baselineReqPerSec ? fmt(m.baselineReqPerSec, 0) + (m.baselineBracket ? ` (${fmt(m.baselineBracket.before, 0)} / ${fmt(m.baselineBracket.after, 0)})` : '') : '',
    m.ratio === null || m.ratio === undefined ? '' : m.ratio.toFixed(3),
    m.cpuUsPerReq === undefined ? '' : String(m.cpuUsPerReq),
  ];
}

const HEADER = ['part', 'measurement', 'conns', 'rate', 'p50 ms', 'p99 ms', 'baseline req/s', 'ratio', 'server CPU µs/req'];

/** A plain-text table: the first two columns left-aligned, the figures right-aligned, except the columns listed in `leftAligned`. */
export function textTable(header: string[], rows: string[][], leftAligned: number[] = []): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i >= 2 && !leftAligned.includes(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** The targets of a run, one line each: PASS, FAIL or n/a. */
export function targetLines(results: PartResult[]): string[] {
  return results.flatMap((r) => r.targets.map((t) => `${t.pass === null ? 'n/a ' : t.pass ? 'PASS' : 'FAIL'}  ${r.part}: ${t.target} — ${t.actual}`));
}

/** The one table printed at the end of a run. */
export function consoleTable(results: PartResult[]): string {
  const rows: string[][] = [];
  for (const r of results) {
    if (r.skipped) rows.push([r.part, `skipped: ${r.skipped}`, '', '', '', '', '', '', '']);
    for (const m of r.measurements) rows.push(rowCells(r.part, m));
    for (const mem of r.memory) rows.push([r.part, `peak RSS, ${mem.process}`, '', `${fmt(mem.peakRssMb, 0)} MB`, '', '', '', '', '']);
  }
  const out = [textTable(HEADER, rows)];
  const targets = targetLines(results);
  if (targets.length) out.push('', ...targets);
  return out.join('\n');
}

export function markdownTable(header: string[], rows: string[][]): string {
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`)].join('\n');
}

/**
 * The full report, rebuilt from every saved part result (a one-part run refreshes only that part's
 * figures) into bench/results/report.md beside them. docs/benchmarks.md is the one page kept by hand
 * from it, and bench/analysis.md the history: a run overwrites neither.
 */
export function writeBenchmarksDoc(machine: MachineInfo): string {
  const results = readAllResults();
  const sections: string[] = [];
  sections.push(`# Benchmarks

Generated by \`npm run bench\` (bench/run.ts) on ${new Date().toISOString().slice(0, 10)}. Raw figures: \`bench/results/<part>.json\` (not committed).

**Read the ratios, not the absolute numbers.** Client (autocannon) and server share this machine: ${machine.cores} cores,
so every load figure is also bounded by the load generator's own CPU. Each part measures, in the same run and with the same
autocannon settings, a bare \`node:http\` server answering a small JSON body (the *baseline*): the ceiling for any Node
service here. \`ratio\` = service req/s ÷ baseline req/s at the same connection count. For a measurement with a ratio
target the baseline is measured right before and right after it, and the ratio taken against their mean (the baseline
column then shows \`mean (before / after)\`): this machine's speed drifts by tens of percent within minutes.

## Machine

| | |
|---|---|
| CPU | ${machine.cpu} |
| Cores | ${machine.cores} |
| Memory | ${machine.memoryGb} GB |
| OS | ${machine.os} |
| Node | ${machine.node} |
| SQLite | ${machine.sqlite} (better-sqlite3) |
| Database | SQLite, WAL, synchronous=NORMAL (the embedded default) |
`);

  const shortened = results.filter((r) => !r.skipped && r.measurementSeconds < (r.part === 'soak' ? 60 : 10)).map((r) => r.part);
  if (shortened.length) {
    sections.push(`> **Shortened run** (${shortened.join(', ')}): fewer seconds per measurement than the defaults, a check that the harness
> works rather than a measurement. Re-run \`npm run bench\` with the defaults on a quiet machine before judging a target.
`);
  }

  const rows: string[][] = [];
  for (const r of results) {
    if (r.skipped) rows.push([r.part, `skipped: ${r.skipped}`, '', '', '', '', '', '', '']);
    for (const m of r.measurements) rows.push(rowCells(r.part, m));
    for (const mem of r.memory) rows.push([r.part, `peak RSS, ${mem.process}${mem.note ? ` (${mem.note})` : ''}`, '', `${fmt(mem.peakRssMb, 0)} MB`, '', '', '', '', '']);
  }
  sections.push(`## Figures\n\nEach part's run date, server runner and seconds per measurement are in its JSON file; this table holds the latest run of each part.\n\n${markdownTable(HEADER, rows)}\n`);
  const runs = results.map((r) => `- \`${r.part}\`: ${r.date}, service run with ${r.server}, ${r.measurementSeconds} s per measurement`);
  sections.push(`Runs:\n\n${runs.join('\n')}\n`);

  const targetRows = results.flatMap((r) => r.targets.map((t) => [r.part, t.target, t.actual, t.pass === null ? 'n/a' : t.pass ? 'pass' : '**FAIL**']));
  sections.push(`## Targets (issue 7, SQLite)\n\n${markdownTable(['part', 'target', 'measured', 'result'], targetRows)}\n`);

  const notes = results.flatMap((r) => r.notes.map((n) => `- \`${r.part}\`: ${n}`));
  if (notes.length) sections.push(`## Notes\n\n${notes.join('\n')}\n`);

  sections.push(postgresDocSection(readAllResults('postgres')));

  // Findings that outlive one run (profiles, causes, fixes) are written by hand in bench/analysis.md.
  sections.push('Findings, profiles and the run-by-run history: bench/analysis.md. The page kept for readers: docs/benchmarks.md.\n');

  sections.push(`## How to reproduce

\`\`\`sh
npm ci
npm run bench                 # every part (about 15–20 minutes with the 1M-row list)
npm run bench -- create       # one part: create | list | lifecycle | webhooks | proofs | witness | schedules | soak | costs | checklists | requests
BENCH_DURATION_S=3 BENCH_SOAK_S=10 BENCH_LIST_SIZES=10000,100000 npm run bench   # a quick check of the harness
npm run bench -- --database postgres          # create, list, lifecycle, webhooks, proofs on PostgreSQL (about 20 minutes)
npm run bench -- create --database postgres --api-processes 2   # one part, one API-process count
\`\`\`

| Variable | Default | Meaning |
|---|---|---|
| \`BENCH_DURATION_S\` | 10 | seconds per measurement |
| \`BENCH_SOAK_S\` | 60 | length of the create soak |
| \`BENCH_LIST_SIZES\` | 10000,100000,1000000 | organization sizes for the list part |
| \`BENCH_SERVER\` | dist | \`dist\`: the harness runs \`npm run build\`, then \`node dist/main.js\`; \`tsx\`: \`node --import tsx src/main.ts\`, the sources as \`npm run dev\` runs them (\`npm start\` runs the build) |
| \`BENCH_SERVICE_NODE_ARGS\` | – | extra node flags for the service, e.g. \`--cpu-prof --cpu-prof-dir=prof\` |
| \`BENCH_POSTGRES_URL\` | postgres://postgres@127.0.0.1:5432/postgres | \`--database postgres\`: the server's maintenance database, where each part's \`wo_bench_<random>\` database is created and dropped |

The harness starts everything itself as child processes and stops it at the end: the service
(\`node dist/main.js serve\` after a build, \`LOG_LEVEL=warn\`, a temporary \`WO_DATA_DIR\`), the baseline server, and for the
webhooks and proofs parts a local receiver (\`bench/webhook-receiver.ts\`). Organizations and keys are made with the
\`wo\` CLI; the list part seeds work orders directly into the SQLite file with a prepared statement while the service is
stopped, keeping \`record_counters\` exact (on PostgreSQL, one \`INSERT … SELECT\` from arrays per 50,000 rows, then
\`VACUUM ANALYZE\`). An interrupted PostgreSQL run (Ctrl-C) stops its processes and drops its database. Peak RSS is the kernel's high-water mark (\`VmHWM\`) of each service process,
also sampled every 200 ms. Run it on a quiet machine: other processes competing for the ${machine.cores} cores show up in every figure.
`);

  const file = path.join(REPO_ROOT, 'bench', 'results', 'report.md');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, sections.join('\n'));
  return file;
}
