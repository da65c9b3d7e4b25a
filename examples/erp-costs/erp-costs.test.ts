import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe } from 'node:test';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { createClient, type WorkOrderClient } from '@work-order-api/client';
import { documentOf, openJournal } from './erp-costs.js';
import { itAgainstLiveService, workOrderBody } from '../../sdk/test/live-service.js';
import { tenantIn } from '../../test/costs/helpers.js';

const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'erp-costs.ts');

/** The example as an operator runs it: its own process. */
function runPosting(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

/**
 * A proxy in front of the service that forwards the first `posts` posts and their answers, then
 * forwards the next one but holds its answer: the service posted the line, the example never hears
 * of it. `held` resolves once that post reached the service and was answered there.
 */
async function startHoldingProxy(upstream: string, posts: number) {
  let seen = 0;
  let heldAt: () => void = () => {};
  const held = new Promise<void>((resolve) => (heldAt = resolve));
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const isPost = req.method === 'POST' && /\/post$/.test(req.url ?? '');
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => name !== 'host' && name !== 'connection') as [string, string][]);
    const answer = await fetch(`${upstream}${req.url}`, { method: req.method!, headers, ...(chunks.length ? { body: Buffer.concat(chunks) } : {}) });
    const body = Buffer.from(await answer.arrayBuffer());
    if (isPost && ++seen > posts) return heldAt();
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const eur = (amount: string) => ({ amount, currency: 'EUR' });
const cents = (amount: string) => BigInt(amount.replace('.', ''));

/** docs/costs.md's walk-through through the client: answers the work order's id. */
async function walkThrough(client: WorkOrderClient, categoryId: string): Promise<string> {
  const main = await client.createLocation({ body: { name: 'Main storeroom' } });
  const van = await client.createLocation({ body: { name: 'Van 2' } });
  const cartridge = await client.createPart({ body: { sku: 'CART-35-CER', name: 'Cartridge 35 mm, ceramic', unit: 'pcs', unitCost: eur('15.90'), reorderPoint: '5' } });
  const orings = await client.createPart({ body: { sku: 'ORING-12', name: 'O-ring 12 mm', unit: 'pcs', unitCost: eur('0.35') } });
  for (const [part, location, quantity] of [[cartridge, main, '20'], [cartridge, van, '4'], [orings, main, '100']] as const) {
    await client.createStockMovement({ path: { id: part.id }, body: { type: 'receive', locationId: location.id, quantity } });
  }
  const sam = await client.createPerson({ body: { name: 'Sam Okafor', hourlyRate: eur('33.33') } });
  const record = await client.createRecord({ body: workOrderBody(categoryId) });
  await client.createRecordLabor({ path: { id: record.id }, body: { personId: sam.id, minutes: 80, note: 'Replaced the cartridge' } });
  await client.createRecordPart({ path: { id: record.id }, body: { partId: cartridge.id, locationId: van.id, quantity: '1' } });
  await client.createRecordPart({ path: { id: record.id }, body: { partId: orings.id, locationId: main.id, quantity: '3' } });
  await client.createRecordCost({ path: { id: record.id }, body: { description: 'Harbour Plumbing invoice 2027-118', amount: eur('120.00'), invoiceRef: '2027-118' } });
  return record.id;
}

describe('examples/erp-costs against a real server', () => {
  itAgainstLiveService('posts every cost line exactly once, through a SIGKILL between the service posting a line and the example hearing of it, and a correction made meanwhile', async ({ harness, baseUrl }) => {
    const tenant = await tenantIn(harness, 'EUR');
    const client = createClient({ baseUrl, apiKey: tenant.key, retry: { baseDelayMs: 20 } });
    const dir = mkdtempSync(path.join(tmpdir(), 'wo-erp-costs-'));
    const databasePath = path.join(dir, 'erp-costs.db');
    const proxy = await startHoldingProxy(baseUrl, 5);
    const env = { WO_KEY: tenant.key, ERP_DB: databasePath, ERP_PAGE_SIZE: '4' };
    let run: ReturnType<typeof runPosting> | undefined;
    try {
      const category = await client.createCategory({ body: { name: 'Plumbing' } });
      const recordId = await walkThrough(client, category.id);
      assert.deepEqual((await client.getRecord({ path: { id: recordId } })).costs?.total, eur('181.39'));
      const others = [];
      for (let i = 0; i < 3; i++) others.push((await client.createRecord({ body: workOrderBody(category.id) })).id);
      for (let i = 0; i < 12; i++) await client.createRecordCost({ path: { id: others[i % 3]! }, body: { description: `Skip hire ${i}`, amount: eur(`${40 + i}.05`) } });

      // A run killed at the worst moment: the service posted its sixth line, the example never heard.
      run = runPosting({ ...env, WO_URL: proxy.url });
      await proxy.held;
      // 5 answered, the sixth posted without its answer; the journal holds the sixth unconfirmed.
      run.child.kill('SIGKILL');
      await run.exited;
      assert.equal((await client.listCostLines({ query: { posted: true } })).total, 6, run.output());

      // Meanwhile the invoice is corrected: a reversing line, new work for the ERP.
      const invoice = (await client.listCostLines({ query: { recordId, limit: 10 } })).costLines.find((line) => line.kind === 'other')!;
      await client.reverseCostLine({ path: { id: invoice.id } });

      run = runPosting({ ...env, WO_URL: baseUrl });
      assert.equal(await run.exited, 0, run.output());
      assert.match(run.output(), /^posted \S+ as JE-000006 \(booked by an earlier run\)$/m);
      assert.match(run.output(), /^nothing left to post; 12 lines posted in this run$/m);
      run = runPosting({ ...env, WO_URL: baseUrl });
      assert.equal(await run.exited, 0, run.output());
      assert.match(run.output(), /^nothing left to post; 0 lines posted in this run$/m);

      const journal = new Database(databasePath, { readonly: true });
      try {
        const entries = new Map((journal.prepare('SELECT * FROM journal_entries').all() as { number: number; cost_line_id: string; amount: string; confirmed_at: string | null; taken_by: string | null }[]).map((entry) => [entry.cost_line_id, entry]));
        const lines = [];
        for await (const line of client.listCostLines.all()) lines.push(line);
        assert.equal(lines.length, 4 + 12 + 1);
        assert.equal(entries.size, lines.length, 'one journal entry per line');
        for (const line of lines) {
          const entry = entries.get(line.id);
          assert.ok(entry, `${line.id} in the journal`);
          assert.deepEqual([line.posted, line.erpDocumentId, entry.amount, entry.taken_by, entry.confirmed_at !== null], [true, documentOf(entry.number), line.amount.amount, null, true], line.id);
        }
        let totals = 0n;
        for (const id of [recordId, ...others]) totals += cents((await client.getRecord({ path: { id } })).costs!.total.amount);
        assert.equal([...entries.values()].reduce((sum, entry) => sum + cents(entry.amount), 0n), totals, 'the journal adds up to the work orders’ totals, to the cent');
        assert.equal(totals, 18139n - 12000n + 12n * 4000n + 66n * 100n + 12n * 5n);
      } finally {
        journal.close();
      }
      openJournal(databasePath).close();
    } finally {
      run?.child.kill('SIGKILL');
      await run?.exited;
      await proxy.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
