// `npm run bench` runs every part; `npm run bench -- <part> [<part>…]` runs some; `--database postgres`
// runs them on PostgreSQL; `npm run bench -- --report` rewrites docs/benchmarks.md from the saved results.
// See docs/benchmarks.md.
import { runChecklistsPart } from './parts/checklists.js';
import { runRequestsPart } from './parts/requests.js';
import { runCostsPart } from './parts/costs.js';
import { runCreatePart } from './parts/create.js';
import { runLifecyclePart } from './parts/lifecycle.js';
import { runListPart } from './parts/list.js';
import { runProofsPart } from './parts/proofs.js';
import { runSchedulesPart } from './parts/schedules.js';
import { runSoakPart } from './parts/soak.js';
import { runWebhooksPart } from './parts/webhooks.js';
import { runWitnessPart } from './parts/witness.js';
import { dropOnInterrupt, postgresServerUrl } from './postgres/bench-database.js';
import type { PostgresPartOptions } from './postgres/part-run.js';
import { runPostgresChecklistsPart } from './postgres/parts/checklists.js';
import { runPostgresRequestsPart } from './postgres/parts/requests.js';
import { runPostgresCostsPart } from './postgres/parts/costs.js';
import { runPostgresCreatePart } from './postgres/parts/create.js';
import { runPostgresDownloadsPart } from './postgres/parts/downloads.js';
import { runPostgresLifecyclePart } from './postgres/parts/lifecycle.js';
import { runPostgresListPart } from './postgres/parts/list.js';
import { runPostgresProofsPart } from './postgres/parts/proofs.js';
import { runPostgresSchedulesPart } from './postgres/parts/schedules.js';
import { runPostgresWebhooksPart } from './postgres/parts/webhooks.js';
import { parseBenchArgs, type BenchOptions } from './lib/bench-options.js';
import { measurementSeconds } from './lib/load.js';
import { buildService, serverRunner } from './lib/processes.js';
import { consoleTable, machineInfo, PART_ORDER, writeBenchmarksDoc, writePartResult } from './lib/report.js';
import { postgresConsoleTable } from './postgres/report-section.js';
import { skippedPart, type PartResult } from './lib/results.js';

const PARTS: Record<string, () => Promise<PartResult>> = {
  create: runCreatePart,
  list: runListPart,
  lifecycle: runLifecyclePart,
  webhooks: runWebhooksPart,
  proofs: runProofsPart,
  witness: runWitnessPart,
  schedules: runSchedulesPart,
  soak: runSoakPart,
  costs: runCostsPart,
  checklists: runChecklistsPart,
  requests: runRequestsPart,
  // Issue 48 item 5 is about PostgreSQL's bytea: SQLite hands a blob back as its bytes.
  downloads: async () => skippedPart('downloads', 'measured on PostgreSQL only (npm run bench -- --database postgres downloads)', serverRunner(), measurementSeconds()),
};

// The soak measures the embedded database's memory only.
const PARTS_ON_POSTGRES: Record<string, (options: PostgresPartOptions) => Promise<PartResult>> = {
  create: runPostgresCreatePart,
  list: runPostgresListPart,
  lifecycle: runPostgresLifecyclePart,
  webhooks: runPostgresWebhooksPart,
  proofs: runPostgresProofsPart,
  schedules: runPostgresSchedulesPart,
  costs: runPostgresCostsPart,
  checklists: runPostgresChecklistsPart,
  requests: runPostgresRequestsPart,
  downloads: runPostgresDownloadsPart,
};

function runPart(part: string, options: BenchOptions): Promise<PartResult> {
  return options.database === 'postgres' ? PARTS_ON_POSTGRES[part]!({ apiProcesses: options.apiProcesses }) : PARTS[part]!();
}

function describeRun(options: BenchOptions): string {
  if (options.database === 'sqlite') return '';
  const server = new URL(postgresServerUrl());
  return ` on PostgreSQL at ${server.host} (a fresh database per part), ${options.apiProcesses.join(' and ')} API process(es) in turn,`;
}

async function main(argv: string[]): Promise<number> {
  const options = parseBenchArgs(argv, PART_ORDER, Object.keys(PARTS_ON_POSTGRES));
  if ('error' in options) {
    process.stderr.write(`bench: ${options.error}\n`);
    return 2;
  }
  if (options.report) {
    // Rebuilds docs/benchmarks.md from the saved bench/results/*.json without measuring anything.
    process.stdout.write(`${writeBenchmarksDoc(machineInfo())}\n`);
    return 0;
  }
  const chosen = options.parts;
  const machine = machineInfo();
  process.stdout.write(
    `bench: ${chosen.join(', ')} — ${measurementSeconds()} s per measurement, service via ${serverRunner()},${describeRun(options)} ` +
      `${machine.cores} cores (${machine.cpu}) shared by client and server\n`,
  );
  if (options.database === 'postgres') dropOnInterrupt();

  if (serverRunner() === 'dist') {
    process.stdout.write('building the service (npm run build) …\n');
    buildService();
  }

  const results: PartResult[] = [];
  let failed = false;
  for (const part of chosen) {
    const started = Date.now();
    process.stdout.write(`\n▶ ${part}\n`);
    try {
      const result = await runPart(part, options);
      results.push(result);
      writePartResult(result, machine);
      process.stdout.write(result.skipped ? `  skipped: ${result.skipped}\n` : `  done in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
    } catch (error) {
      failed = true;
      const cause = (error as Error).cause;
      process.stderr.write(`  ${part} failed: ${(error as Error).stack ?? String(error)}${cause ? `\n  cause: ${String(cause)}` : ''}\n`);
    }
  }

  const table = options.database === 'postgres' ? postgresConsoleTable(results) : consoleTable(results);
  process.stdout.write(`\n${table}\n\nClient and server share this machine (${machine.cores} cores): compare ratios, not absolute numbers.\n`);
  const doc = writeBenchmarksDoc(machine);
  process.stdout.write(`raw figures: bench/results/${options.database === 'postgres' ? 'postgres-' : ''}<part>.json; summary: ${doc}\n`);
  return failed ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
