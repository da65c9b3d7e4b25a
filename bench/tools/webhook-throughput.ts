// One worker's webhook delivery throughput, in one process, against a receiver in a child process:
//   npx tsx bench/tools/webhook-throughput.ts [deliveries=20000] [subscriptions=1,10,100]
// Writes the outbox events first, then starts only the webhook dispatcher and delivery worker and
// times them until every delivery succeeded. Prints deliveries/s and worker CPU µs per delivery
// (process.cpuUsage: the receiver runs in its own process), which holds up on a busy machine.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { createContext } from '../../src/context.js';
import { emitEvents } from '../../src/events/outbox.js';

const total = Number(process.argv[2] ?? 20_000);
const subscriptionCounts = (process.argv[3] ?? '1,10,100').split(',').map(Number);

const receiverSource = `
const http = require('node:http');
let count = 0;
const server = http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => { count++; res.writeHead(200, { 'content-type': 'application/json' }); res.end('{"ok":true}'); });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', (m) => { if (m === 'count') process.send({ count }); if (m === 'stop') process.exit(0); });
`;

const dataDir = mkdtempSync(path.join(tmpdir(), 'wo-whtp-'));
const receiverFile = path.join(dataDir, 'receiver.cjs');
writeFileSync(receiverFile, receiverSource);
const receiver = fork(receiverFile, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
const port = await new Promise<number>((resolve) => receiver.once('message', (m: { port: number }) => resolve(m.port)));
const receivedCount = () =>
  new Promise<number>((resolve) => {
    receiver.once('message', (m: { count: number }) => resolve(m.count));
    receiver.send('count');
  });

for (const subscriptions of subscriptionCounts) {
  const dir = mkdtempSync(path.join(dataDir, `s${subscriptions}-`));
  const config = loadConfig({ WO_DATA_DIR: dir, LOG_LEVEL: 'silent', WO_WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
  const context = await createContext(config, { logger: pino({ level: 'silent' }), createKeys: true });
  const org = await context.organizations.create('throughput');
  for (let i = 0; i < subscriptions; i++) {
    await context.webhooks.create(org.id, { name: `s${i}`, url: `http://127.0.0.1:${port}/hooks/${i}`, events: ['record.created'] });
  }
  const events = Math.ceil(total / subscriptions);
  const expected = events * subscriptions;
  const occurredAt = new Date().toISOString();
  for (let i = 0; i < events; i += 1000) {
    const chunk = Array.from({ length: Math.min(1000, events - i) }, (_, j) => ({
      orgId: org.id,
      type: 'record.created' as const,
      payload: { recordId: `rec_${i + j}`, status: 'OPEN', categoryId: 'cat_x', priority: 'MEDIUM' },
      occurredAt,
    }));
    await context.database.db.transaction().execute((tx) => emitEvents(tx, chunk));
  }
  const jobs = context.backgroundJobs.filter((job) => job.name === 'webhook-dispatcher' || job.name === 'webhook-deliveries');
  const before = await receivedCount();
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (const job of jobs) job.start();
  let received = 0;
  const deadline = Date.now() + 120_000 + expected * 5;
  while (received < expected && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    received = (await receivedCount()) - before;
  }
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  for (const job of jobs) await job.stop();
  const succeeded = await context.database.db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '=', 'succeeded')
    .executeTakeFirstOrThrow();
  process.stdout.write(
    `${String(subscriptions).padStart(3)} subscriptions: ${received}/${expected} received in ${seconds.toFixed(2)} s = ${Math.round(received / seconds)
      .toString()
      .padStart(6)} deliveries/s, ${((used.user + used.system) / Math.max(1, received)).toFixed(0).padStart(5)} µs CPU/delivery (${Number(succeeded.n)} recorded succeeded), peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB\n`,
  );
  await context.close();
}
receiver.send('stop');
rmSync(dataDir, { recursive: true, force: true });
