import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { describe } from 'node:test';
import { ProblemError, UnexpectedResponseError, createClient, isProblem } from '@work-order-api/client';
import { itAgainstLiveService, workOrderBody } from './live-service.js';
import { waitFor } from '../../test/helpers/test-app.js';

describe('the SDK client against a real server', () => {
  itAgainstLiveService('calls operations by their operationId and moves a work order through its lifecycle', async ({ client }) => {
    const category = await client.createCategory({ body: { name: 'Plumbing' } });
    const created = await client.createRecord({ body: workOrderBody(category.id) });
    assert.equal(created.status, 'OPEN');
    await client.assignRecord({ path: { id: created.id }, body: { assignee: 'Bob Plumber' } });
    const started = await client.startRecord({ path: { id: created.id } });
    assert.equal(started.status, 'IN_PROGRESS');
    const held = await client.holdRecord({ path: { id: created.id } });
    assert.equal(held.status, 'ON_HOLD');
    assert.equal((await client.getRecord({ path: { id: created.id } })).status, 'ON_HOLD');
    const anonymous = createClient({ baseUrl: await baseOf(client) });
    assert.equal(typeof (await anonymous.getJwks()).keys, 'object', 'public operations need no key');
  });

  itAgainstLiveService('iterates every item of a list across pages, and every event of the feed', async ({ client }) => {
    const category = await client.createCategory({ body: { name: 'Plumbing' } });
    const ids = new Set<string>();
    for (let i = 0; i < 7; i++) ids.add((await client.createRecord({ body: workOrderBody(category.id) })).id);
    const seen: string[] = [];
    for await (const record of client.listRecords.all({ query: { limit: 3, categoryId: category.id } })) seen.push(record.id);
    assert.equal(seen.length, 7);
    assert.deepEqual(new Set(seen), ids);
    const page = await client.listRecords({ query: { limit: 3 } });
    assert.equal(page.records.length, 3);
    assert.equal(page.total, 7);

    await waitFor(async () => (await client.listEvents({ query: { type: 'record.created' } })).total === 7, 10_000, 'the 7 events to enter the feed');
    const events: number[] = [];
    for await (const event of client.listEvents.all({ query: { limit: 2, type: 'record.created' } })) events.push(event.sequence);
    assert.equal(events.length, 7);
    assert.deepEqual(events, [...events].sort((a, b) => a - b));
  });

  itAgainstLiveService('reads a work order’s history with listRecordHistory, and still with the deprecated listRecordEvents', async ({ client, tenant }) => {
    const category = await client.createCategory({ body: { name: 'Plumbing' } });
    const { id } = await client.createRecord({ body: workOrderBody(category.id) });
    await client.assignRecord({ path: { id }, body: { assignee: 'Bob Plumber' } });
    await client.startRecord({ path: { id } });
    const page = await client.listRecordHistory({ path: { id }, query: { limit: 2 } });
    assert.equal(page.total, 3);
    assert.deepEqual(page.history.map((entry) => [entry.action, entry.from, entry.to, entry.actor]), [
      ['created', null, 'OPEN', `api_key:${tenant.keyId}`],
      ['assign', 'OPEN', 'ASSIGNED', `api_key:${tenant.keyId}`],
    ]);
    const all: string[] = [];
    for await (const entry of client.listRecordHistory.all({ path: { id }, query: { limit: 1 } })) all.push(entry.action);
    assert.deepEqual(all, ['created', 'assign', 'start']);
    const old = await client.listRecordEvents.withResponse({ path: { id } });
    assert.deepEqual(old.data.events.map((event) => event.action), all);
    assert.equal(old.response.headers.get('sunset'), 'Wed, 30 Jun 2027 23:59:59 GMT');
    assert.match(old.response.headers.get('link') ?? '', /rel="successor-version"/);
  });

  itAgainstLiveService('sends an Idempotency-Key with every POST: the same key replays the first answer', async ({ client }) => {
    const category = await client.createCategory({ body: { name: 'Plumbing' } });
    const first = await client.createRecord.withResponse({ body: workOrderBody(category.id), idempotencyKey: 'order-42' });
    const again = await client.createRecord.withResponse({ body: workOrderBody(category.id), idempotencyKey: 'order-42' });
    assert.equal(first.status, 201);
    assert.equal(first.replayed, false);
    assert.equal(again.replayed, true);
    assert.equal(again.data.id, first.data.id);
    const other = await client.createRecord.withResponse({ body: workOrderBody(category.id) });
    assert.equal(other.replayed, false, 'a call without a key gets a fresh one');
    assert.equal((await client.listRecords()).total, 2);
  });

  itAgainstLiveService('throws ProblemError typed by code, with the problem and the request id', async ({ client, tenant }) => {
    await assert.rejects(client.getRecord({ path: { id: 'rec_01JD3Q4W8Y6V3C0M2ZP4K7N9XA' } }), (error: unknown) => {
      assert.ok(error instanceof ProblemError);
      assert.equal(error.code, 'not_found');
      assert.equal(error.status, 404);
      assert.match(error.requestId ?? '', /./);
      assert.equal(error.response.status, 404);
      // A logged or printed error shows the problem; the Response (80 lines of it) stays out of the way.
      assert.ok(!Object.keys(error).includes('response'));
      assert.doesNotMatch(inspect(error), /Response \{/);
      assert.match(inspect(error), /not_found/);
      return true;
    });
    const category = await client.createCategory({ body: { name: 'Plumbing' } });
    const record = await client.createRecord({ body: workOrderBody(category.id) });
    try {
      await client.closeRecord({ path: { id: record.id } });
      assert.fail('closing an open work order must fail');
    } catch (error) {
      assert.ok(isProblem(error, 'invalid_transition'));
      assert.equal(error.code, 'invalid_transition');
      assert.deepEqual(error.problem.allowedActions?.includes('assign'), true);
    }
    await assert.rejects(client.listRecords({ query: { limit: 1000 } }), (error: unknown) => isProblem(error, 'validation_failed') && error.problem.errors !== undefined);
    const anonymous = createClient({ baseUrl: await baseOf(client) });
    await assert.rejects(anonymous.listRecords(), (error: unknown) => isProblem(error, 'unauthenticated'));
    assert.ok(tenant.key.startsWith('wo_'));
  });

  itAgainstLiveService('makes a change conditional with the ETag it read (412 precondition_failed when stale)', async ({ client }) => {
    const category = await client.createCategory({ body: { name: 'Plumbing' } });
    const read = await client.getCategory.withResponse({ path: { id: category.id } });
    assert.match(read.etag ?? '', /^"\d+"$/);
    await client.updateCategory({ path: { id: category.id }, body: { name: 'Plumbing and heating' }, ifMatch: read.etag! });
    await assert.rejects(client.updateCategory({ path: { id: category.id }, body: { name: 'Heating' }, ifMatch: read.etag! }), (error: unknown) => isProblem(error, 'precondition_failed'));
  });

  itAgainstLiveService('uploads and downloads an attachment as bytes, and reads text answers as strings', async ({ client }) => {
    const category = await client.createCategory({ body: { name: 'Plumbing' } });
    const record = await client.createRecord({ body: workOrderBody(category.id) });
    const text = new TextEncoder().encode('meter reading: 4711\n');
    const attachment = await client.uploadRecordAttachment({ path: { id: record.id }, query: { filename: 'meter.txt' }, body: text, contentType: 'text/plain' });
    const downloaded = await client.downloadRecordAttachment({ path: { id: record.id, attachmentId: attachment.id } });
    assert.ok(downloaded instanceof Uint8Array);
    assert.deepEqual([...downloaded], [...text]);
    const verifierKey = await client.getTransparencyVerifierKey();
    assert.equal(typeof verifierKey, 'string');
  });

  itAgainstLiveService('reports an answer that is not a problem document as UnexpectedResponseError', async ({ baseUrl }) => {
    const client = createClient({ baseUrl: `${baseUrl}/nowhere`, retry: { maxAttempts: 1 } });
    await assert.rejects(client.getHealth(), (error: unknown) => error instanceof ProblemError || error instanceof UnexpectedResponseError);
  });
});

/** The base URL a client was made with, read back from a real request. */
async function baseOf(client: import('@work-order-api/client').WorkOrderClient): Promise<string> {
  const { response } = await client.getHealth.withResponse();
  return new URL(response.url).origin;
}
