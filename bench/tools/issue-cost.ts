// Server CPU per request of issuing a part (POST /records/{id}/parts) against creating a work order,
// on PostgreSQL (one `serve --no-worker` and one worker, as the costs part runs), without the costs
// part's 100k seeding; A/B rounds alternate, medians reported, with what PostgreSQL waited on:
//   npx tsx bench/tools/issue-cost.ts [seconds] [rounds]
import type { RequestSpec } from 'autocannon';
import { Baseline, runLoad } from '../lib/load.js';
import { buildService, serverRunner } from '../lib/processes.js';
import { createCostsTenant, setUpCosts } from '../lib/costs-setup.js';
import { recordBody } from '../lib/tenant.js';
import { measureOnPostgres } from '../postgres/measure.js';
import { onFreshDatabase } from '../postgres/part-run.js';
import { describeWaits } from '../postgres/wait-samples.js';

const [seconds, rounds] = [Number(process.argv[2] ?? 5), Number(process.argv[3] ?? 3)];
const connections = 10;
if (serverRunner() === 'dist') buildService();
process.env.BENCH_DURATION_S = String(seconds);
const baseline = new Baseline();
await baseline.at(connections);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

await onFreshDatabase(async ({ deployment, observer }) => {
  const tenant = await createCostsTenant(deployment.dataDir, deployment.env);
  await deployment.start({ apiProcesses: 1, workers: 1 });
  try {
    const fixture = await setUpCosts(deployment.api.baseUrl, tenant);
    const run = `${process.pid}-${Date.now()}`;
    let n = 0;
    const issue = (): RequestSpec[] => [
      {
        method: 'POST',
        setupRequest: (request) => {
          const i = n++;
          const recordId = fixture.issueRecordIds[i % fixture.issueRecordIds.length]!;
          const body = JSON.stringify({ partId: fixture.partIds[i % fixture.partIds.length], locationId: fixture.locationId, quantity: '1' });
          return { ...request, path: `/api/v1/records/${recordId}/parts`, body, headers: { ...tenant.headers, 'idempotency-key': `issue-${run}-${i}` } };
        },
      },
    ];
    const create = (): RequestSpec[] => [
      { method: 'POST', setupRequest: (request) => ({ ...request, path: '/api/v1/records', body: recordBody(fixture.categoryId, n++), headers: { ...tenant.headers, 'idempotency-key': `create-${run}-${n}` } }) },
    ];
    const paths: Array<[string, () => RequestSpec[]]> = [
      ['issue a part', issue],
      ['create a work order', create],
    ];
    const url = deployment.api.baseUrl;
    for (const [, requests] of paths) await runLoad({ url, connections, durationS: 2, requests: requests() });
    const cpu = new Map<string, number[]>(paths.map(([label]) => [label, []]));
    for (let round = 0; round < rounds; round++) {
      for (const [label, requests] of round % 2 === 0 ? paths : [...paths].reverse()) {
        const m = await measureOnPostgres(observer, baseline, { name: label, connections, apiProcesses: 1, load: () => runLoad({ url, server: deployment.api, connections, durationS: seconds, requests: requests() }) });
        const total = (m.cpuUsPerReq ?? NaN) + (m.postgresCpuUsPerReq ?? 0);
        cpu.get(label)!.push(total);
        process.stdout.write(`round ${round + 1} ${label.padEnd(22)} ${m.value} req/s, API ${m.cpuUsPerReq} + PG ${m.postgresCpuUsPerReq} µs; waits ${m.waits ? describeWaits(m.waits) : '-'}\n`);
      }
    }
    const [a, b] = paths.map(([label]) => median(cpu.get(label)!));
    process.stdout.write(`issue / create (median CPU): ${(a! / b!).toFixed(2)} (${a} vs ${b} µs)\n`);
  } finally {
    await deployment.stop();
  }
});
