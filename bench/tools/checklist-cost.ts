// Server CPU per request of answering a checklist item against adding a comment, on the same open
// work order, over real HTTP; A/B rounds alternate (machine speed drifts), medians reported:
//   npx tsx bench/tools/checklist-cost.ts [seconds] [rounds]
import { runLoad } from '../lib/load.js';
import { buildService, removeDataDir, serverRunner, startService, temporaryDataDir } from '../lib/processes.js';
import { BENCH_SCOPES, callApi, createCategory, createTenant, recordBody } from '../lib/tenant.js';

const [seconds, rounds] = [Number(process.argv[2] ?? 5), Number(process.argv[3] ?? 3)];
const connections = 20;
if (serverRunner() === 'dist') buildService();
const dataDir = temporaryDataDir();
const service = await startService({ dataDir, args: ['serve'] });
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
try {
  const tenant = await createTenant(dataDir, undefined, {}, [...BENCH_SCOPES, 'checklists:write']);
  const categoryId = await createCategory(service.baseUrl, tenant);
  const items = [{ key: 'notes', label: 'Notes', type: 'text' }, ...Array.from({ length: 19 }, (_, i) => ({ key: `check_${i}`, label: `Check ${i}`, type: 'pass_fail' }))];
  const checklist = await callApi<{ id: string }>(service.baseUrl, tenant, 'POST', '/api/v1/checklists', { name: 'Bench', items });
  const record = await callApi<{ id: string }>(service.baseUrl, tenant, 'POST', '/api/v1/records', { ...JSON.parse(recordBody(categoryId, 1)), checklistIds: [checklist.body.id] });
  const steps: Array<[string, Parameters<typeof runLoad>[0]]> = [
    ['PUT …/items/notes (answer)', { url: service.baseUrl, connections, method: 'PUT', path: `/api/v1/records/${record.body.id}/checklists/${checklist.body.id}/items/notes`, headers: tenant.headers, body: JSON.stringify({ value: 'Checked the burner' }) }],
    ['POST …/comments (comment)', { url: service.baseUrl, connections, method: 'POST', path: `/api/v1/records/${record.body.id}/comments`, headers: tenant.headers, body: JSON.stringify({ body: 'Checked the burner' }) }],
  ];
  const cpu = new Map<string, number[]>(steps.map(([label]) => [label, []]));
  for (const [, options] of steps) await runLoad({ ...options, durationS: 1 });
  for (let round = 0; round < rounds; round++) {
    for (const [label, options] of round % 2 === 0 ? steps : [...steps].reverse()) {
      const figures = await runLoad({ ...options, durationS: seconds, server: service });
      if (figures.non2xx > 0) throw new Error(`${label}: ${figures.non2xx} answers not 2xx`);
      cpu.get(label)!.push(figures.serverCpuUsPerReq ?? Number.NaN);
    }
  }
  const [answer, comment] = steps.map(([label]) => median(cpu.get(label)!));
  for (const [label] of steps) process.stdout.write(`${label.padEnd(30)} median ${median(cpu.get(label)!)} µs CPU/req (rounds ${cpu.get(label)!.join(', ')})\n`);
  process.stdout.write(`answer / comment: ${(answer! / comment!).toFixed(2)}\n`);
} finally {
  await service.stop();
  removeDataDir(dataDir);
}
