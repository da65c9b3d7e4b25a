// The ERP's side of the costs: paging the unposted lines, syncing what changed with updatedAfter,
// posting under a race, corrections as new lines, and record.cost_added in the feed and the webhooks.
import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { createWorkOrder, itOnEachDatabase, TestClock, waitFor } from '../helpers/test-app.js';
import { readFeed } from '../helpers/event-feed.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { get, post, stockedWorkOrder, tenantIn } from './helpers.js';

type Line = { id: string; kind: string; amount: { amount: string }; posted: boolean; reversesId: string | null; updatedAt: string };

const eur = (amount: string) => ({ amount, currency: 'EUR' });
const clock = new TestClock(new Date('2027-03-02T08:00:00.000Z'));

describe('cost lines for the ERP', () => {
  itOnEachDatabase(
    'pages the unposted lines with limit and offset, and updatedAfter answers exactly what changed since: posted lines and the reversing line, as new',
    async (t) => {
      const tenant = await tenantIn(t, 'EUR');
      const first = await createWorkOrder(tenant);
      const second = await createWorkOrder(tenant);
      const made: string[] = [];
      for (const [recordId, minutes] of [[first, 30], [second, 45], [first, 60]] as const) {
        clock.advance(1000);
        made.push((await post(tenant, `/api/v1/records/${recordId}/labor`, { minutes, rate: eur('40.00') })).id);
      }
      for (const recordId of [second, first]) {
        clock.advance(1000);
        made.push((await post(tenant, `/api/v1/records/${recordId}/costs`, { description: 'Skip hire', amount: eur('85.50') })).id);
      }

      const seen: string[] = [];
      for (let offset = 0; ; offset += 2) {
        const page = await get(tenant, `/api/v1/cost-lines?posted=false&limit=2&offset=${offset}`);
        assert.equal(page.total, 5);
        seen.push(...page.costLines.map((line: Line) => line.id));
        if (page.costLines.length < 2) break;
      }
      assert.deepEqual(seen, made, 'every line once, oldest change first');
      assert.deepEqual((await get(tenant, `/api/v1/cost-lines?recordId=${second}`)).costLines.map((line: Line) => line.id), [made[1], made[3]]);

      // The ERP synced up to here; then it posts two lines, and a posted one is corrected.
      clock.advance(60_000);
      const since = clock.now().toISOString();
      await post(tenant, `/api/v1/cost-lines/${made[0]}/post`, { erpDocumentId: 'JE-1' }, 200);
      clock.advance(1000);
      await post(tenant, `/api/v1/cost-lines/${made[3]}/post`, { erpDocumentId: 'JE-2' }, 200);
      clock.advance(1000);
      const reversal = await post(tenant, `/api/v1/cost-lines/${made[0]}/reverse`, undefined);
      const changed = (await get(tenant, `/api/v1/cost-lines?updatedAfter=${encodeURIComponent(since)}`)).costLines as Line[];
      assert.deepEqual(
        changed.map((line) => [line.id, line.posted, line.amount.amount, line.reversesId]),
        [
          [made[0], true, '20.00', null],
          [made[3], true, '85.50', null],
          [reversal.id, false, '-20.00', made[0]],
        ],
      );
      const todo = (await get(tenant, '/api/v1/cost-lines?posted=false')).costLines as Line[];
      assert.deepEqual(todo.map((line) => line.id), [made[1], made[2], made[4], reversal.id], 'the reversing line is new work for the ERP; the posted ones left the list');
      assert.equal((await get(tenant, `/api/v1/cost-lines?posted=true&updatedAfter=${encodeURIComponent(since)}`)).total, 2);
      assert.equal((await get(tenant, `/api/v1/records/${first}`)).costs.labor.amount, '40.00', '20.00 + 40.00 − 20.00');
    },
    { clock },
  );

  itOnEachDatabase('posts a line once when two ERPs race to post it as different documents', async (t) => {
    const tenant = await tenantIn(t, 'EUR');
    const recordId = await createWorkOrder(tenant);
    const line = await post(tenant, `/api/v1/records/${recordId}/costs`, { description: 'Call-out fee', amount: eur('65.00') });
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => tenant.request({ method: 'POST', url: `/api/v1/cost-lines/${line.id}/post`, payload: { erpDocumentId: `JE-${i}` } })),
    );
    const won = answers.filter((answer) => answer.statusCode === 200);
    assert.equal(won.length, 1, answers.map((answer) => `${answer.statusCode} ${answer.body}`).join('\n'));
    const winner = won[0]!.json().erpDocumentId as string;
    for (const answer of answers.filter((a) => a.statusCode !== 200)) {
      assert.deepEqual([answer.statusCode, answer.json().code, answer.json().erpDocumentId], [409, 'cost_line_posted', winner]);
    }
    const stored = (await get(tenant, `/api/v1/cost-lines?recordId=${recordId}`)).costLines[0];
    assert.deepEqual([stored.posted, stored.erpDocumentId], [true, winner]);
    assert.equal((await post(tenant, `/api/v1/cost-lines/${line.id}/post`, { erpDocumentId: winner }, 200)).postedAt, stored.postedAt, 'the same document again changes nothing');
  });

  itOnEachDatabase('delivers record.cost_added for labor, parts, other costs and reversals to the event feed and to a webhook, with the same payload', async (t) => {
    const receiver = await startReceiver();
    try {
      const tenant = await tenantIn(t, 'EUR');
      const hook = await post(tenant, '/api/v1/webhooks', { name: 'ERP', url: receiver.url, events: ['record.cost_added'] });
      assert.ok(hook.id);
      for (const job of t.context.backgroundJobs) job.start();
      const { main, part, recordId } = await stockedWorkOrder(tenant);
      const labor = await post(tenant, `/api/v1/records/${recordId}/labor`, { minutes: 80, rate: eur('33.33') });
      const used = await post(tenant, `/api/v1/records/${recordId}/parts`, { partId: part, locationId: main, quantity: '2' });
      const invoice = await post(tenant, `/api/v1/records/${recordId}/costs`, { description: 'Invoice 118', amount: eur('120.00') });
      const reversal = await post(tenant, `/api/v1/cost-lines/${used.id}/reverse`, undefined);
      const expected = [
        [labor.id, 'labor', '44.44'],
        [used.id, 'part', '31.80'],
        [invoice.id, 'other', '120.00'],
        [reversal.id, 'part', '-31.80'],
      ];

      const feed = await waitFor(async () => {
        const page = await readFeed(tenant, 'type=record.cost_added');
        return page.events.length === expected.length ? page.events : undefined;
      }, 30_000, 'four record.cost_added in the feed');
      assert.deepEqual(feed.map((event) => { const p = event.payload as { costLineId: string; kind: string; amount: { amount: string; currency: string }; recordId: string }; return [p.costLineId, p.kind, p.amount.amount, p.amount.currency, p.recordId]; }), expected.map((e) => [...e, 'EUR', recordId]));
      await waitFor(() => receiver.ofEvent('record.cost_added').length >= expected.length, 30_000, 'four record.cost_added webhooks');
      const delivered = new Map(receiver.ofEvent('record.cost_added').map((delivery) => [delivery.headers['x-webhook-id'], delivery.json.payload]));
      for (const event of feed) assert.equal(JSON.stringify(delivered.get(event.id)), JSON.stringify(event.payload), 'the webhook carries the feed event’s payload');
    } finally {
      await receiver.close();
    }
  });
});
