// Server CPU per completion of a work order with the checklists part's 20-item answered checklist
// against one without (bench/parts/checklists.ts measures the time until sealed; this isolates the
// API process's share of it), in alternating rounds, medians reported:
//   npx tsx bench/tools/checklist-completion-cost.ts [completions per round] [rounds] [--profile]
// BENCH_DATABASE_URL=postgres://… runs the service on that (empty or migrated) PostgreSQL database.
// --profile writes window-<pid>.cpuprofile of the last checklist round (bench/lib/cpu-profile-window.mjs;
// summarize with `node bench/tools/summarize-profile.mjs <file>`).
import path from 'node:path';
import { runLoad } from '../lib/load.js';
import { createChecklistsTenant, prepareCompletions, setUpChecklists } from '../lib/checklists-setup.js';
import { REPO_ROOT, removeDataDir, startService, temporaryDataDir } from '../lib/processes.js';

const [perRound, rounds] = [Number(process.argv[2] ?? 300), Number(process.argv[3] ?? 3)];
const profile = process.argv.includes('--profile');
const databaseEnv: Record<string, string> = process.env.BENCH_DATABASE_URL ? { DATABASE_URL: process.env.BENCH_DATABASE_URL } : {};
const dataDir = temporaryDataDir();
const service = await startService({ dataDir, args: ['serve', '--no-worker'], env: databaseEnv, nodeArgs: profile ? ['--import', path.join(REPO_ROOT, 'bench/lib/cpu-profile-window.mjs')] : [] });
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
try {
  const tenant = await createChecklistsTenant(dataDir, databaseEnv);
  const fixture = await setUpChecklists(service.baseUrl, tenant);
  const cpu = { checklist: [] as number[], none: [] as number[] };
  const body = JSON.stringify({ resolutionNotes: 'Replaced the thermostat.' });
  for (let round = 0; round <= rounds; round++) {
    for (const side of round % 2 === 0 ? (['checklist', 'none'] as const) : (['none', 'checklist'] as const)) {
      const ids = await prepareCompletions(service.baseUrl, tenant, fixture, perRound, side === 'checklist');
      const profiled = profile && round === rounds && side === 'checklist';
      if (profiled) process.kill(service.pid, 'SIGUSR2');
      const figures = await runLoad({
        url: service.baseUrl,
        server: service,
        connections: 10,
        amount: ids.length,
        requests: [{ method: 'POST', setupRequest: (request) => ({ ...request, path: `/api/v1/records/${ids.shift() ?? 'rec_none'}/complete`, headers: tenant.headers, body }) }],
      });
      if (profiled) process.kill(service.pid, 'SIGUSR2');
      if (figures.non2xx > 0) throw new Error(`${side}: ${figures.non2xx} completions not 2xx`);
      // Round 0 warms up.
      if (round > 0) cpu[side].push(figures.serverCpuUsPerReq ?? Number.NaN);
    }
  }
  for (const side of ['checklist', 'none'] as const) process.stdout.write(`complete, ${side.padEnd(9)} median ${median(cpu[side])} µs API CPU per completion (rounds ${cpu[side].join(', ')})\n`);
  process.stdout.write(`checklist / none: ${(median(cpu.checklist) / median(cpu.none)).toFixed(2)}\n`);
  if (profile) {
    await new Promise((resolve) => setTimeout(resolve, 1000)); // the profile is written asynchronously
    process.stdout.write(`profile: ${process.env.BENCH_PROFILE_DIR ?? '$TMPDIR'}/window-${service.pid}.cpuprofile\n`);
  }
} finally {
  await service.stop();
  removeDataDir(dataDir);
}
