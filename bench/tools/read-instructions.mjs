// Instructions per single read (GET /api/v1/records/{id}, SQLite, or PostgreSQL with DATABASE_URL),
// counted by valgrind (callgrind), for comparing builds on a machine whose timings drift: counts do
// not depend on its speed, but vary a little between runs (the JIT, the GC), so compare medians of
// alternating runs. Uses a checkout's dist/ (`npm run build` there first):
//   valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/cg.out \
//     node bench/tools/read-instructions.mjs <checkout> [reads=2000] [warm-up=8000]
// The service is built in this process as `wo serve` builds it; reads go through Fastify with
// `inject`, 10 in flight, over 200 work orders in turn (the bench's rotating read). Sockets are left
// out: inject skips them, so the count is the service's own work. Divide "I refs" by the reads.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { countInstructions, openRecordsApp } from './callgrind-service.mjs';

const root = path.resolve(process.argv[2] ?? '.');
const total = Number(process.argv[3] ?? 2000);
const warm = Number(process.argv[4] ?? 8000);
const { app, context, key, category, dataDir } = await openRecordsApp(root, 'read');
const headers = { authorization: `Bearer ${key}` };
const paths = [];
for (let i = 0; i < 200; i++) {
  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/records',
    headers: { ...headers, 'content-type': 'application/json' },
    payload: JSON.stringify({ categoryId: category.id, address: `${i} Load Street`, requesterName: 'Bench Requester', description: 'The radiator in room 4 is cold; please send someone this week.' }),
  });
  if (created.statusCode !== 201) throw new Error(`create answered ${created.statusCode}: ${created.body}`);
  paths.push(`/api/v1/records/${created.json().id}`);
}
let n = 0;
const read = async () => {
  const response = await app.inject({ method: 'GET', url: paths[n++ % paths.length], headers });
  if (response.statusCode !== 200) throw new Error(`read answered ${response.statusCode}: ${response.body}`);
};
const reads = async (count) => {
  for (let done = 0; done < count; done += 10) await Promise.all(Array.from({ length: Math.min(10, count - done) }, read));
};

await reads(warm);
countInstructions(true);
await reads(total);
countInstructions(false);
console.log(`read ${total} (after ${warm} of warm-up)`);
await app.close();
await context.close();
rmSync(dataDir, { recursive: true, force: true });
