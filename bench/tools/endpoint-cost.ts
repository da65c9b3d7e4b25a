// Server CPU per request over real HTTP for a ladder of endpoints, from the cheapest to a full create:
//   npx tsx bench/tools/endpoint-cost.ts [seconds] [--no-worker]
// Each step isolates one layer (Fastify routing, authentication, validation, idempotency, the write
// itself), so the difference between two lines is what that layer costs per request.
import { Baseline, runLoad } from '../lib/load.js';
import { buildService, removeDataDir, serverRunner, startService, temporaryDataDir } from '../lib/processes.js';
import { callApi, createCategory, createTenant, recordBody } from '../lib/tenant.js';

const seconds = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 5);
const worker = !process.argv.includes('--no-worker');
const connections = 50;
if (serverRunner() === 'dist') buildService();
const baseline = await new Baseline().at(connections);
const dataDir = temporaryDataDir();
const service = await startService({ dataDir, args: worker ? ['serve'] : ['serve', '--no-worker'] });
try {
  const tenant = await createTenant(dataDir);
  const categoryId = await createCategory(service.baseUrl, tenant);
  const created = await callApi<{ id: string }>(service.baseUrl, tenant, 'POST', '/api/v1/records', JSON.parse(recordBody(categoryId, 1)));
  let n = 0;
  const steps: Array<[string, Parameters<typeof runLoad>[0]]> = [
    ['GET /healthz (no auth)', { url: service.baseUrl, connections, path: '/healthz' }],
    ['GET /api/v1/categories/{id} (auth, one row)', { url: service.baseUrl, connections, path: `/api/v1/categories/${categoryId}`, headers: tenant.readHeaders }],
    ['GET /api/v1/records/{id} (auth, one record)', { url: service.baseUrl, connections, path: `/api/v1/records/${created.body.id}`, headers: tenant.readHeaders }],
    ['POST /api/v1/records, no Idempotency-Key', { url: service.baseUrl, connections, method: 'POST', path: '/api/v1/records', headers: tenant.headers, body: recordBody(categoryId, 1) }],
    [
      'POST /api/v1/records with Idempotency-Key',
      {
        url: service.baseUrl,
        connections,
        requests: [{ method: 'POST', path: '/api/v1/records', setupRequest: (r) => ({ ...r, body: recordBody(categoryId, 1), headers: { ...tenant.headers, 'idempotency-key': `cost-${process.pid}-${++n}` } }) }],
      },
    ],
  ];
  process.stdout.write(`baseline node:http, ${connections} connections: ${baseline.reqPerSec} req/s, ${baseline.serverCpuUsPerReq} µs CPU/req; worker ${worker ? 'embedded' : 'off'}\n`);
  for (const [label, options] of steps) {
    await runLoad({ ...options, durationS: 1 });
    const figures = await runLoad({ ...options, durationS: seconds, server: service });
    const ratio = (figures.reqPerSec / baseline.reqPerSec).toFixed(3);
    process.stdout.write(`${label.padEnd(48)} ${String(figures.reqPerSec).padStart(8)} req/s  ratio ${ratio}  p99 ${figures.p99Ms} ms  ${figures.serverCpuUsPerReq} µs CPU/req  non2xx ${figures.non2xx}\n`);
  }
} finally {
  await service.stop();
  removeDataDir(dataDir);
}
