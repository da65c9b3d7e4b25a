// `npm run bench` runs every part; `npm run bench -- <part> [<part>…]` runs some; `npm run bench -- --report`
// rewrites docs/benchmarks.md from the saved results. See docs/benchmarks.md.
import { runCreatePart } from './parts/create.js';
import { runLifecyclePart } from './parts/lifecycle.js';
import { runListPart } from './parts/list.js';
import { runProofsPart } from './parts/proofs.js';
import { runSoakPart } from './parts/soak.js';
import { runWebhooksPart } from './parts/webhooks.js';
import { measurementSeconds } from './lib/load.js';
import { buildService, serverRunner } from './lib/processes.js';
import { consoleTable, machineInfo, PART_ORDER, writeBenchmarksDoc, writePartResult } from './lib/report.js';
import type { PartResult } from './lib/results.js';

const PARTS: Record<string, () => Promise<PartResult>> = {
  create: runCreatePart,
  list: runListPart,
  lifecycle: runLifecyclePart,
  webhooks: runWebhooksPart,
  proofs: runProofsPart,
  soak: runSoakPart,
};

async function main(argv: string[]): Promise<number> {
  if (argv[0] === '--report') {
    // Rebuilds docs/benchmarks.md from the saved bench/results/*.json without measuring anything.
    process.stdout.write(`${writeBenchmarksDoc(machineInfo())}\n`);
    return 0;
  }
  const unknown = argv.filter((name) => !(name in PARTS));
  if (unknown.length) {
    process.stderr.write(`bench: unknown part ${unknown.join(', ')}; choose from ${PART_ORDER.join(', ')}\n`);
    return 2;
  }
  const chosen = argv.length ? PART_ORDER.filter((p) => argv.includes(p)) : PART_ORDER;
  const machine = machineInfo();
  process.stdout.write(
    `bench: ${chosen.join(', ')} — ${measurementSeconds()} s per measurement, service via ${serverRunner()}, ` +
      `${machine.cores} cores (${machine.cpu}) shared by client and server\n`,
  );

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
      const result = await PARTS[part]!();
      results.push(result);
      writePartResult(result, machine);
      process.stdout.write(result.skipped ? `  skipped: ${result.skipped}\n` : `  done in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
    } catch (error) {
      failed = true;
      process.stderr.write(`  ${part} failed: ${(error as Error).stack ?? String(error)}\n`);
    }
  }

  process.stdout.write(`\n${consoleTable(results)}\n\nClient and server share this machine (${machine.cores} cores): compare ratios, not absolute numbers.\n`);
  const doc = writeBenchmarksDoc(machine);
  process.stdout.write(`raw figures: bench/results/<part>.json; summary: ${doc}\n`);
  return failed ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
