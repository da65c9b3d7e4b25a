import { fmt, markdownTable, rowCells, targetLines, textTable } from '../lib/report.js';
import type { Measurement, PartResult } from '../lib/results.js';
import { describeWaits } from './wait-samples.js';

const HEADER = ['part', 'measurement', 'API procs', 'conns', 'rate', 'p50 ms', 'p99 ms', 'baseline req/s', 'ratio', 'service CPU µs/req', 'PG CPU µs/req'];
const WAITS = 'waits (mean active backends: top waits; record_counters locks)';

/** A row of the SQLite table with the API-process count after the name and PostgreSQL's CPU at the end. */
function cells(part: string, m: Measurement): string[] {
  const [name, measurement, ...figures] = rowCells(part, m);
  return [name!, measurement!, m.apiProcesses === undefined ? '' : String(m.apiProcesses), ...figures, m.postgresCpuUsPerReq === undefined ? '' : String(m.postgresCpuUsPerReq)];
}

function rows(results: PartResult[], withWaits: boolean): string[][] {
  const blank = (n: number) => Array<string>(n).fill('');
  const out: string[][] = [];
  for (const r of results) {
    if (r.skipped) out.push([r.part, `skipped: ${r.skipped}`, ...blank(HEADER.length - 2 + (withWaits ? 1 : 0))]);
    for (const m of r.measurements) out.push([...cells(r.part, m), ...(withWaits ? [m.waits ? describeWaits(m.waits) : ''] : [])]);
    for (const mem of r.memory) out.push([r.part, `peak RSS, ${mem.process}`, '', '', `${fmt(mem.peakRssMb, 0)} MB`, ...blank(HEADER.length - 5 + (withWaits ? 1 : 0))]);
  }
  return out;
}

/** The table printed at the end of a PostgreSQL run, with the waits of each measurement. */
export function postgresConsoleTable(results: PartResult[]): string {
  const out = [textTable([...HEADER, WAITS], rows(results, true), [HEADER.length])];
  const targets = targetLines(results);
  if (targets.length) out.push('', ...targets);
  return out.join('\n');
}

function waitRows(results: PartResult[]): string[][] {
  return results.flatMap((r) =>
    r.measurements
      .filter((m) => m.waits)
      .map((m) => {
        const w = m.waits!;
        const share = (n: number) => `${Math.round((n / Math.max(1, w.activeBackends)) * 100)} %`;
        return [
          r.part,
          m.name,
          String(w.samples),
          fmt(w.activeBackends / Math.max(1, w.samples)),
          Object.entries(w.byWait)
            .map(([wait, n]) => `${wait} ${share(n)}`)
            .join(', '),
          Object.entries(w.lockWaitsByRelation)
            .map(([table, n]) => `${table} ${share(n)}`)
            .join(', ') || '–',
          `${Math.round(w.recordCountersLockShare * 100)} %`,
        ];
      }),
  );
}

/** docs/benchmarks.md's PostgreSQL section, from the saved results of `npm run bench -- --database postgres`. */
export function postgresDocSection(results: PartResult[]): string {
  if (!results.length) {
    return '## PostgreSQL (issue 22)\n\nNot measured on this build yet: `npm run bench -- --database postgres` (see How to reproduce).\n';
  }
  const server = results.find((r) => r.postgres)?.postgres;
  const settings = server ? Object.entries(server.settings).map(([name, value]) => `${name}=${value}`).join(', ') : 'unknown';
  const sections = [
    `## PostgreSQL (issue 22)

\`npm run bench -- --database postgres\` runs create, list, lifecycle, webhooks and proofs on PostgreSQL ${server?.version ?? ''} (${settings}),
on a database created for each part (\`wo_bench_<random>\`) and dropped after it; raw figures in \`bench/results/postgres-<part>.json\`. The service runs as it is deployed there:
N API processes (\`serve --no-worker\`, each on its own port) and separate \`worker\` processes, sharing one \`DATABASE_URL\`,
one \`WO_SECRET_KEY\` and one keys directory. create, list, lifecycle and proofs are measured with 1 and then 2 API processes
(\`--api-processes N\` picks one count), the load generator dealing its connections out among them, and their targets
checked on 1; webhooks use the largest count. Webhooks run 2 workers, the others 1. Ratios are to the same bare
\`node:http\` baseline as above.

- **service CPU µs/req**: CPU (\`/proc/<pid>/stat\`) of the API processes, summed, per request (the worker beside them
  is not in it); for deliveries, of the workers per delivery; for a reference handler, of its one process.
- **PG CPU µs/req**: CPU of the bench database's backends plus the cluster's own processes (WAL writer, checkpointer,
  background writer, which also write for any other database on the server), per request or per delivery.
- **Waits**: \`pg_stat_activity\` sampled every ~50 ms from a connection of its own: the bench database's active backends by
  \`wait_event_type:wait_event\` (\`none\`: not waiting), and lock waits by table: the one \`pg_locks\` names, or for a wait
  on another transaction, the hot-row table (\`record_counters\`, the reference's counter) in which that transaction changed
  a row. Shares are of active backends over all samples.
`,
  ];
  const shortened = results.filter((r) => !r.skipped && r.measurementSeconds < 10).map((r) => r.part);
  if (shortened.length) sections.push(`> **Shortened run** (${shortened.join(', ')}): fewer seconds per measurement than the defaults, a check that the harness works rather than a measurement.\n`);
  sections.push(`### Figures (PostgreSQL)\n\n${markdownTable(HEADER, rows(results, false))}\n`);
  sections.push(`Runs:\n\n${results.map((r) => `- \`${r.part}\`: ${r.date}, service run with ${r.server}, ${r.measurementSeconds} s per measurement`).join('\n')}\n`);
  sections.push(`### Waits (PostgreSQL)\n\n${markdownTable(['part', 'measurement', 'samples', 'mean active', 'waits (share of active backends)', 'lock waits by table', 'record_counters locks'], waitRows(results))}\n`);
  const targetRows = results.flatMap((r) => r.targets.map((t) => [r.part, t.target, t.actual, t.pass === null ? 'n/a' : t.pass ? 'pass' : '**FAIL**']));
  sections.push(`### Targets (issue 22, PostgreSQL)\n\n${markdownTable(['part', 'target', 'measured', 'result'], targetRows)}\n`);
  const notes = results.flatMap((r) => r.notes.map((n) => `- \`${r.part}\`: ${n}`));
  if (notes.length) sections.push(`### Notes (PostgreSQL)\n\n${notes.join('\n')}\n`);
  return sections.join('\n');
}
