import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { createClient, isProblem } from '@work-order-api/client';
import { itAgainstLiveService, workOrderBody } from './live-service.js';
import { rateLimited, startFlakyProxy, unavailable } from './flaky-proxy.js';

describe('SDK retries, through a loopback proxy that fails first', () => {
  itAgainstLiveService('retries a GET answered 503, waiting the Retry-After second', async ({ baseUrl, tenant }) => {
    const proxy = await startFlakyProxy(baseUrl, (index) => (index === 0 ? unavailable('1') : 'forward'));
    try {
      const client = createClient({ baseUrl: proxy.url, apiKey: tenant.key, retry: { baseDelayMs: 10 } });
      const page = await client.listRecords();
      assert.equal(page.total, 0);
      assert.equal(proxy.seen.length, 2);
      assert.ok(proxy.seen[1]!.at - proxy.seen[0]!.at >= 950, `waited ${proxy.seen[1]!.at - proxy.seen[0]!.at} ms`);
    } finally {
      await proxy.close();
    }
  });

  itAgainstLiveService('retries a POST answered 429 with the same Idempotency-Key, after an HTTP-date Retry-After', async ({ baseUrl, tenant, client: direct }) => {
    const category = await direct.createCategory({ body: { name: 'Plumbing' } });
    const inOneSecond = new Date(Date.now() + 1500).toUTCString();
    const proxy = await startFlakyProxy(baseUrl, (index) => (index === 0 ? rateLimited(inOneSecond) : 'forward'));
    try {
      const client = createClient({ baseUrl: proxy.url, apiKey: tenant.key, retry: { baseDelayMs: 10 } });
      const record = await client.createRecord({ body: workOrderBody(category.id) });
      assert.equal(proxy.seen.length, 2);
      assert.ok(proxy.seen[1]!.at - proxy.seen[0]!.at >= 400);
      const keys = proxy.seen.map((request) => request.headers['idempotency-key']);
      assert.match(keys[0] as string, /^[0-9a-f-]{36}$/);
      assert.equal(keys[1], keys[0]);
      assert.equal((await direct.getRecord({ path: { id: record.id } })).id, record.id);
    } finally {
      await proxy.close();
    }
  });

  itAgainstLiveService('a POST whose answer was lost is sent again with its key and replayed: created once', async ({ baseUrl, tenant, client: direct }) => {
    const category = await direct.createCategory({ body: { name: 'Plumbing' } });
    const proxy = await startFlakyProxy(baseUrl, (index) => (index === 0 ? 'forward-then-drop' : 'forward'));
    try {
      const client = createClient({ baseUrl: proxy.url, apiKey: tenant.key, retry: { baseDelayMs: 10 } });
      const answer = await client.createRecord.withResponse({ body: workOrderBody(category.id) });
      assert.equal(answer.replayed, true, 'the second attempt gets the stored answer (X-Idempotent-Replay)');
      assert.equal(answer.status, 201);
      assert.equal(proxy.seen[1]!.headers['idempotency-key'], proxy.seen[0]!.headers['idempotency-key']);
      const all = await direct.listRecords();
      assert.equal(all.total, 1);
      assert.equal(all.records[0]!.id, answer.data.id);
    } finally {
      await proxy.close();
    }
  });

  itAgainstLiveService('retries a GET after a network error, and gives up after maxAttempts', async ({ baseUrl, tenant }) => {
    const proxy = await startFlakyProxy(baseUrl, (index) => (index < 2 ? 'drop' : 'forward'));
    try {
      const client = createClient({ baseUrl: proxy.url, apiKey: tenant.key, retry: { baseDelayMs: 10 } });
      assert.equal((await client.listCategories()).total, 0);
      assert.equal(proxy.seen.length, 3);
      const stillFailing = await startFlakyProxy(baseUrl, () => unavailable('0'));
      try {
        const failing = createClient({ baseUrl: stillFailing.url, apiKey: tenant.key, retry: { maxAttempts: 2, baseDelayMs: 10 } });
        await assert.rejects(failing.listCategories(), (error: unknown) => isProblem(error, 'unavailable'));
        assert.equal(stillFailing.seen.length, 2);
      } finally {
        await stillFailing.close();
      }
    } finally {
      await proxy.close();
    }
  });

  itAgainstLiveService('does not send a PATCH or DELETE again after a 503 or a lost answer, but does after a 429', async ({ baseUrl, tenant, client: direct }) => {
    const category = await direct.createCategory({ body: { name: 'Plumbing' } });
    const plan: Array<ReturnType<typeof unavailable> | 'forward' | 'drop'> = [unavailable('0'), 'drop', rateLimited('0'), 'forward'];
    const proxy = await startFlakyProxy(baseUrl, (index) => plan[index] ?? 'forward');
    try {
      const client = createClient({ baseUrl: proxy.url, apiKey: tenant.key, retry: { baseDelayMs: 10 } });
      await assert.rejects(client.updateCategory({ path: { id: category.id }, body: { name: 'Heating' } }), (error: unknown) => isProblem(error, 'unavailable'));
      assert.equal(proxy.seen.length, 1);
      await assert.rejects(client.deleteCategory({ path: { id: category.id } }), TypeError);
      assert.equal(proxy.seen.length, 2);
      const renamed = await client.updateCategory({ path: { id: category.id }, body: { name: 'Heating' } });
      assert.equal(renamed.name, 'Heating');
      assert.equal(proxy.seen.length, 4, 'the 429 was sent again');
    } finally {
      await proxy.close();
    }
  });
});
