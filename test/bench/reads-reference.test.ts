// The reads reference (bench/reference-reads-server.ts) is only a yardstick if it does the service's
// work: these check that it answers exactly the service's bytes on the service's own SQLite file, and
// refuses what the service refuses. (On PostgreSQL the bench checks the same before measuring:
// bench/lib/read-references.ts, sameAnswer.)
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startBenchScript } from '../../bench/lib/processes.js';
import { diffAnswers } from '../../bench/lib/read-references.js';
import { dispatchAll } from '../helpers/event-feed.js';
import { createWorkOrder, seedCategory, startTestApp, type Tenant, type TestApp } from '../helpers/test-app.js';

describe('the reads reference of the bench', () => {
  let harness: TestApp;
  let tenant: Tenant;
  let reference: Awaited<ReturnType<typeof startBenchScript>>;
  const ids: string[] = [];

  before(async () => {
    harness = await startTestApp('sqlite');
    tenant = await harness.newTenant(['records:read', 'records:write', 'categories:read', 'categories:write', 'events:read', 'proofs:read']);
    const categoryId = await seedCategory(tenant);
    for (let i = 0; i < 5; i++) {
      ids.push(await createWorkOrder(tenant, { categoryId, description: `Leak “${i}” under the sink\n<b>`, metadata: { unit: `4${i}B`, nested: { n: i } }, assignee: i % 2 ? 'Ana' : undefined, priority: i % 2 ? 'HIGH' : 'LOW' }));
    }
    const started = await tenant.request({ method: 'POST', url: `/api/v1/records/${ids[1]}/start`, payload: {} });
    assert.equal(started.statusCode, 200, started.body);
    // Two completion proofs, sealed: the second's inclusion proof is two hashes long.
    for (const id of [ids[1]!, ids[3]!]) {
      if (id !== ids[1]) assert.equal((await tenant.request({ method: 'POST', url: `/api/v1/records/${id}/start`, payload: {} })).statusCode, 200);
      const completed = await tenant.request({ method: 'POST', url: `/api/v1/records/${id}/complete`, payload: { resolutionNotes: 'Replaced the trap.' } });
      assert.equal(completed.statusCode, 200, completed.body);
    }
    await harness.context.transparencyLog.sealPending();
    await dispatchAll(harness.context);
    const verifierKey = (await harness.app.inject({ method: 'GET', url: '/api/v1/transparency/verifier-key' })).body.trim();
    reference = await startBenchScript('reference-reads-server.ts', '/', { REFERENCE_SQLITE_PATH: path.join(harness.dataDir, 'wo.sqlite'), REFERENCE_VERIFIER_KEY: verifierKey });
  });

  after(async () => {
    await reference?.stop();
    await harness?.close();
  });

  const fromReference = async (url: string, key: string | null = tenant.key) => {
    const response = await fetch(`${reference.baseUrl}${url}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
    return { status: response.status, body: await response.text() };
  };

  it('answers every list page and work order with the service’s bytes', async () => {
    const urls = ['/api/v1/records?limit=50&offset=0', '/api/v1/records?limit=2&offset=2', '/api/v1/records?limit=50&status=OPEN&offset=0', '/api/v1/records?limit=50&status=IN_PROGRESS&offset=0', '/api/v1/records?limit=50&offset=10', ...ids.map((id) => `/api/v1/records/${id}`)];
    for (const url of urls) {
      const ours = await tenant.request({ method: 'GET', url });
      assert.equal(ours.statusCode, 200, url);
      assert.deepEqual(await fromReference(url), { status: 200, body: ours.body }, url);
    }
  });

  it('answers the event feed with the service’s bytes, after any position, and only what was dispatched', async () => {
    const whole = JSON.parse((await tenant.request({ method: 'GET', url: '/api/v1/events?limit=100' })).body) as { events: { sequence: number }[]; total: number };
    assert.ok(whole.total >= 7, `the feed holds ${whole.total} events`);
    const third = whole.events[2]!.sequence;
    const urls = ['/api/v1/events', '/api/v1/events?limit=100', `/api/v1/events?after=${third}&limit=2`, `/api/v1/events?after=${third}&limit=2&offset=1`, `/api/v1/events?after=${whole.events.at(-1)!.sequence}`];
    for (const url of urls) {
      const ours = await tenant.request({ method: 'GET', url });
      assert.equal(ours.statusCode, 200, url);
      assert.deepEqual(await fromReference(url), { status: 200, body: ours.body }, url);
    }
    // Not dispatched yet: in neither feed.
    await createWorkOrder(tenant, { categoryId: await seedCategory(tenant) });
    const ours = await tenant.request({ method: 'GET', url: '/api/v1/events?limit=100' });
    assert.equal((JSON.parse(ours.body) as { total: number }).total, whole.total, 'the new events are not dispatched yet');
    assert.deepEqual(await fromReference('/api/v1/events?limit=100'), { status: 200, body: ours.body });
    await dispatchAll(harness.context);
    const dispatched = await tenant.request({ method: 'GET', url: '/api/v1/events?limit=100' });
    assert.ok((JSON.parse(dispatched.body) as { total: number }).total > whole.total);
    assert.deepEqual(await fromReference('/api/v1/events?limit=100'), { status: 200, body: dispatched.body });
    const withoutScope = await harness.newTenant(['records:read']);
    assert.equal((await fromReference('/api/v1/events', withoutScope.key)).status, 401);
  });

  it('answers a sealed completion proof with the service’s bytes, and 404 where the service answers 404', async () => {
    for (const id of [ids[1]!, ids[3]!]) {
      const ours = await tenant.request({ method: 'GET', url: `/api/v1/records/${id}/proof` });
      assert.equal(ours.statusCode, 200, ours.body);
      assert.equal((JSON.parse(ours.body) as { status: string }).status, 'sealed');
      assert.deepEqual(await fromReference(`/api/v1/records/${id}/proof`), { status: 200, body: ours.body }, id);
    }
    assert.equal((await fromReference(`/api/v1/records/${ids[0]}/proof`)).status, 404, 'never completed');
    assert.equal((await fromReference('/api/v1/records/rec_01NOSUCHRECORD0000000000000/proof')).status, 404);
    const other = await harness.newTenant(['proofs:read']);
    assert.equal((await fromReference(`/api/v1/records/${ids[1]}/proof`, other.key)).status, 404, 'another organization’s');
  });

  it('diffs answers over HTTP: the same bytes pass, and an answer that differs is named with where it differs', async () => {
    const address = await harness.app.listen({ port: 0, host: '127.0.0.1' });
    const headers = { authorization: `Bearer ${tenant.key}` };
    const service = { url: address, headers, server: { cpuSeconds: () => 0 } };
    const other = { url: reference.baseUrl, headers, server: { cpuSeconds: () => 0 } };
    const same = ['/api/v1/records?limit=3&offset=1', '/api/v1/records?limit=1&status=OPEN&offset=0', ...ids.map((id) => `/api/v1/records/${id}`)];
    assert.deepEqual(await diffAnswers(service, other, same), { compared: same.length, differing: [] });
    // The reference knows no assignee filter: it answers the whole list, the service only Ana’s work orders.
    const differing = `/api/v1/records?limit=50&offset=0&assignee=Ana`;
    const diff = await diffAnswers(service, other, [...same, differing]);
    assert.deepEqual(diff.differing, [differing]);
    assert.match(diff.first ?? '', /^\/api\/v1\/records\?limit=50&offset=0&assignee=Ana: at character \d+, the service has /);
  });

  it('refuses a missing or unknown key, and a work order of another organization is not found', async () => {
    assert.equal((await fromReference('/api/v1/records', null)).status, 401);
    assert.equal((await fromReference('/api/v1/records', `wo_${'x'.repeat(44)}`)).status, 401);
    const other = await harness.newTenant(['records:read']);
    assert.equal((await fromReference(`/api/v1/records/${ids[0]}`, other.key)).status, 404);
    const unscoped = await harness.newTenant(['categories:read']);
    assert.equal((await fromReference('/api/v1/records', unscoped.key)).status, 401);
  });
});
