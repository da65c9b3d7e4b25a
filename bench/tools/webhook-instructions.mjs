// Instructions per webhook delivery, counted by valgrind (callgrind), for comparing builds on a machine
// whose speed drifts too much for timings (here ±30 % within minutes). Counts do not depend on the
// machine's speed, but they still vary between runs of one build (±5 %: when the JIT and the GC run
// differs), so compare the medians of five or more alternating runs. Uses a checkout's dist/ (run
// `npm run build` there first):
//   valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/cg.out \
//     node bench/tools/webhook-instructions.mjs <checkout> [deliveries=1000] [subscriptions=1] [warm-up=3000]
// The dispatcher and worker first deliver the warm-up (not counted: the JIT compiles the hot paths);
// then instrumentation is switched on (callgrind_control -i on) while the measured events are written
// and delivered to a receiver in a child process (not traced). Divide "I refs" by the deliveries.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { countInstructions, openCheckoutContext } from './callgrind-service.mjs';
const root = path.resolve(process.argv[2] ?? '.');
const total = Number(process.argv[3] ?? 1000);
const subscriptions = Number(process.argv[4] ?? 1);
const { emitEvents } = await import(path.join(root, 'dist/events/outbox.js'));
const receiverSource = `
const http = require('node:http');
let count = 0;
const server = http.createServer((req, res) => { req.on('data', () => {}); req.on('end', () => { count++; res.writeHead(200, { 'content-type': 'application/json' }); res.end('{"ok":true}'); }); });
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', (m) => { if (m === 'count') process.send({ count }); if (m === 'stop') process.exit(0); });`;
const dataDir = mkdtempSync(path.join(tmpdir(), 'wo-cg-'));
const receiverFile = path.join(dataDir, 'receiver.cjs');
writeFileSync(receiverFile, receiverSource);
const receiver = fork(receiverFile, [], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
const port = await new Promise((resolve) => receiver.once('message', (m) => resolve(m.port)));
const receivedCount = () => new Promise((resolve) => { receiver.once('message', (m) => resolve(m.count)); receiver.send('count'); });
const context = await openCheckoutContext(root, dataDir, { WO_WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
const org = await context.organizations.create('cg');
for (let i = 0; i < subscriptions; i++) await context.webhooks.create(org.id, { name: `s${i}`, url: `http://127.0.0.1:${port}/hooks/${i}`, events: ['record.created'] });
const warm = Number(process.argv[5] ?? 3000);
const occurredAt = new Date().toISOString();
const emit = async (count, tag) => {
  for (let i = 0; i < count; i += 1000) {
    const chunk = Array.from({ length: Math.min(1000, count - i) }, (_, j) => ({ orgId: org.id, type: 'record.created', payload: { recordId: `rec_${tag}${i + j}`, status: 'OPEN', categoryId: 'cat_x', priority: 'MEDIUM' }, occurredAt }));
    await context.database.db.transaction().execute((tx) => emitEvents(tx, chunk));
  }
};
const waitFor = async (n) => { let received = 0; while (received < n) { await new Promise((r) => setTimeout(r, 20)); received = await receivedCount(); } return received; };
const jobs = context.backgroundJobs.filter((job) => job.name === 'webhook-dispatcher' || job.name === 'webhook-deliveries');
// Warm-up (not counted): the JIT compiles the hot paths.
await emit(Math.ceil(warm / subscriptions), 'w');
for (const job of jobs) job.start();
await waitFor(Math.ceil(warm / subscriptions) * subscriptions);
const before = await receivedCount();
countInstructions(true);
await emit(Math.ceil(total / subscriptions), 'm');
const received = (await waitFor(before + Math.ceil(total / subscriptions) * subscriptions)) - before;
countInstructions(false);
for (const job of jobs) await job.stop();
console.log(`received ${received}`);
await context.close();
receiver.send('stop');
rmSync(dataDir, { recursive: true, force: true });
