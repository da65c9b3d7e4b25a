// Instructions per work-order create (SQLite, or PostgreSQL with DATABASE_URL), counted by valgrind (callgrind), for comparing builds
// on a machine whose timings drift too much to settle a few per cent (the same build read 160 and 293
// µs per create in create-ab.ts rounds minutes apart). Counts do not depend on the machine's speed,
// but vary between runs of one build (the JIT and the GC), so compare medians of alternating runs.
// Uses a checkout's dist/ (run `npm run build` there first):
//   valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/cg.out \
//     node bench/tools/create-instructions.mjs <checkout> [creates=1000] [warm-up=6000]
// The whole service is built in this process as `wo serve` builds it (its background jobs, the
// dispatcher among them, running), and creates go through Fastify with `inject`, 50 at a time, each
// with a fresh Idempotency-Key (the bench's create). The warm-up is not counted; instrumentation is
// switched on (callgrind_control -i on) for the measured creates only. Divide "I refs" by the creates.
// Keep the warm-up long: after 2,000 creates V8's optimizing compiler was still 29 % of the counted
// instructions, more for a build with more code, which turned a 10 % saving into an 8 % loss.
// Sockets are left out: inject skips them, so the count is the service's own work.
// DATABASE_URL set: runs on that PostgreSQL database (give it an empty one each run), the count
// then being the service's side of the driver (query building, protocol, result rows), not PostgreSQL's.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { countInstructions, openRecordsApp } from './callgrind-service.mjs';

const root = path.resolve(process.argv[2] ?? '.');
const total = Number(process.argv[3] ?? 1000);
const warm = Number(process.argv[4] ?? 6000);
const { app, context, key, category, dataDir } = await openRecordsApp(root, 'create');
const body = JSON.stringify({ categoryId: category.id, address: '1 Load Street', requesterName: 'Bench Requester', description: 'The radiator in room 4 is cold; please send someone this week.' });
let n = 0;
const create = async () => {
  const response = await app.inject({
    method: 'POST',
    url: '/api/v1/records',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `cg-${++n}` },
    payload: body,
  });
  if (response.statusCode !== 201) throw new Error(`create answered ${response.statusCode}: ${response.body}`);
};
/** `count` creates, 50 in flight at a time (what lets the group commit gather them, as under load). */
const creates = async (count) => {
  for (let done = 0; done < count; done += 50) await Promise.all(Array.from({ length: Math.min(50, count - done) }, create));
};

for (const job of context.backgroundJobs) job.start();
await creates(warm);
countInstructions(true);
await creates(total);
countInstructions(false);
console.log(`created ${total} (after ${warm} of warm-up)`);
await app.close();
await context.close();
rmSync(dataDir, { recursive: true, force: true });
