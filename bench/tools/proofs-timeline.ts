// Where the time goes between completing work orders and their record.proof_delivered receipts:
//   npx tsx bench/tools/proofs-timeline.ts [--no-subscribe]
// Completes COMPLETIONS (default 10,000) started work orders at CONNS (default 50) connections, as
// the proofs part does, and prints per BUCKET_MS (default 500 ms) how many completions answered and
// how many announcements arrived, with the event loop's and the process's CPU. Uses dist/.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { runLoad } from '../lib/load.js';
import { readCpuSeconds, removeDataDir, startService, temporaryDataDir } from '../lib/processes.js';
import { WebhookReceiver } from '../lib/receiver.js';
import { createCategory, createTenant, recordBody } from '../lib/tenant.js';
import { subscribe, WEBHOOK_ENV } from '../parts/webhooks.js';

const count = Number(process.env.COMPLETIONS ?? 10_000);
const bucketMs = Number(process.env.BUCKET_MS ?? 500);
const dataDir = temporaryDataDir();
const service = await startService({ dataDir, args: ['serve'], env: WEBHOOK_ENV });
const receiver = await WebhookReceiver.start();
try {
  const tenant = await createTenant(dataDir);
  const categoryId = await createCategory(service.baseUrl, tenant);
  await subscribe(service.baseUrl, tenant, receiver, 1, ['record.proof_delivered'], 'timeline');
  const ready: string[] = [];
  await runLoad({
    url: service.baseUrl,
    connections: 20,
    amount: 2 * count,
    requests: [
      { method: 'POST', path: '/api/v1/records', headers: tenant.headers, body: recordBody(categoryId, 3, { assignee: 'T' }), onResponse: (s, b, c) => void (s === 201 && (c.id = (JSON.parse(b) as { id: string }).id)) },
      { method: 'POST', setupRequest: (r, c) => (c.id ? { ...r, path: `/api/v1/records/${String(c.id)}/start`, headers: tenant.headers, body: '{}' } : null), onResponse: (s, b) => void (s === 200 && ready.push((JSON.parse(b) as { id: string }).id)) },
    ],
  });
  await receiver.reset();
  const body = JSON.stringify({ resolutionNotes: 'Replaced the thermostat and tested the circuit.' });
  const answered: number[] = [];
  const cpu: Array<{ at: number; process: number; loop: number }> = [];
  const receiverPid = Number(execFileSync('pgrep', ['-f', 'webhook-receiver'], { encoding: 'utf8' }).trim().split('\n').at(-1));
  const schedstat = () => readFileSync(`/proc/${service.pid}/task/${service.pid}/schedstat`, 'utf8').split(' ').map(Number);
  const schedBefore = schedstat();
  const threadsBefore = threadCpu(service.pid);
  const othersBefore = { receiver: readCpuSeconds(receiverPid), client: process.cpuUsage() };
  const started = Date.now();
  const sampler = setInterval(() => cpu.push({ at: Date.now(), process: readCpuSeconds(service.pid), loop: readCpuSeconds(service.pid, 'main-thread') }), bucketMs);
  cpu.push({ at: started, process: readCpuSeconds(service.pid), loop: readCpuSeconds(service.pid, 'main-thread') });
  await runLoad({
    url: service.baseUrl,
    connections: Number(process.env.CONNS ?? 50),
    amount: ready.length,
    requests: [{ method: 'POST', setupRequest: (r) => ({ ...r, path: `/api/v1/records/${ready.shift() ?? 'rec_none'}/complete`, headers: tenant.headers, body }), onResponse: (s) => void (s === 200 && answered.push(Date.now())) }],
  });
  const stats = await receiver.waitForCount(answered.length, 120_000, 'record.proof_delivered');
  clearInterval(sampler);
  cpu.push({ at: Date.now(), process: readCpuSeconds(service.pid), loop: readCpuSeconds(service.pid, 'main-thread') });
  const client = process.cpuUsage(othersBefore.client);
  const schedAfter = schedstat();
  const threadsAfter = threadCpu(service.pid);
  // schedstat: ns on a CPU, ns runnable but waiting for one, timeslices.
  console.log(`event loop thread: ${((schedAfter[0]! - schedBefore[0]!) / 1e6).toFixed(0)} ms on a CPU, ${((schedAfter[1]! - schedBefore[1]!) / 1e6).toFixed(0)} ms waiting for one, ${schedAfter[2]! - schedBefore[2]!} timeslices`);
  const wall = (Date.now() - started) / 1000;
  console.log(
    `CPU over ${wall.toFixed(1)} s: service ${Math.round((100 * (cpu.at(-1)!.process - cpu[0]!.process)) / wall)} % (event loop ${Math.round((100 * (cpu.at(-1)!.loop - cpu[0]!.loop)) / wall)} %), ` +
      `receiver ${Math.round((100 * (readCpuSeconds(receiverPid) - othersBefore.receiver)) / wall)} %, load generator ${Math.round((client.user + client.system) / 1e4 / wall)} % (of one core)`,
  );
  const byName = new Map<string, number>();
  for (const [tid, after] of threadsAfter) byName.set(`${after.name}#${tid}`, after.ticks - (threadsBefore.get(tid)?.ticks ?? 0));
  console.log(`service threads (CPU ms): ${[...byName].filter(([, t]) => t > 0).sort((a, b) => b[1] - a[1]).map(([name, t]) => `${name} ${t * 10}`).join(', ')}`);
  const receipts = ((await receiver.stats('record.proof_delivered', true)).receipts ?? []).map((r) => r.receivedAt);
  const end = Math.max(...receipts, ...answered);
  console.log(`${answered.length} completions: last answered at ${answered.at(-1)! - started} ms, last announced at ${stats.lastAt! - started} ms (${Math.round(answered.length / ((stats.lastAt! - started) / 1000))}/s overall)`);
  console.log('   ms  completed  announced  loop%  process%');
  for (let t = 0; t < end - started; t += bucketMs) {
    const inBucket = (times: number[]) => times.filter((x) => x - started >= t && x - started < t + bucketMs).length;
    const a = cpu.find((c) => c.at - started >= t) ?? cpu.at(-1)!;
    const b = cpu.find((c) => c.at - started >= t + bucketMs) ?? cpu.at(-1)!;
    const span = Math.max(1, b.at - a.at) / 1000;
    console.log(`${String(t).padStart(5)}  ${String(inBucket(answered)).padStart(9)}  ${String(inBucket(receipts)).padStart(9)}  ${String(Math.round((100 * (b.loop - a.loop)) / span)).padStart(5)}  ${String(Math.round((100 * (b.process - a.process)) / span)).padStart(8)}`);
  }
} finally {
  await receiver.stop();
  await service.stop();
  removeDataDir(dataDir);
}

/** CPU ticks (1/100 s) and name of each thread of `pid`, by thread id. */
function threadCpu(pid: number): Map<string, { name: string; ticks: number }> {
  const threads = new Map<string, { name: string; ticks: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const name = tid === String(pid) ? 'event loop' : readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      threads.set(tid, { name, ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // the thread ended
    }
  }
  return threads;
}
