import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { AppContext } from '../../src/context.js';
import { itOnEachDatabase, recordBody, seedCategory, TestClock } from '../helpers/test-app.js';

/** Makes every attempt to store an answer fail, for real, with a trigger on the table. */
async function refuseStoredAnswers(context: AppContext): Promise<void> {
  const db = context.database.db;
  if (context.database.dialect === 'sqlite') {
    await sql`CREATE TRIGGER refuse_answers BEFORE UPDATE OF state ON idempotency_keys WHEN NEW.state = 'completed' BEGIN SELECT RAISE(ABORT, 'answers refused'); END`.execute(db);
  } else {
    await sql`CREATE OR REPLACE FUNCTION refuse_answers() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'answers refused'; END $$`.execute(db);
    await sql`CREATE TRIGGER refuse_answers BEFORE INSERT OR UPDATE ON idempotency_keys FOR EACH ROW WHEN (NEW.state = 'completed') EXECUTE FUNCTION refuse_answers()`.execute(db);
  }
}

async function acceptStoredAnswers(context: AppContext): Promise<void> {
  await (context.database.dialect === 'sqlite' ? sql`DROP TRIGGER refuse_answers` : sql`DROP TRIGGER refuse_answers ON idempotency_keys`).execute(context.database.db);
}

describe('Idempotency-Key on POST', () => {
  itOnEachDatabase('replays the original status, body and headers with X-Idempotent-Replay, creating nothing new', async ({ newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const key = randomUUID();
    const first = await tenant.request({ method: 'POST', url: '/api/v1/records', headers: { 'idempotency-key': key }, payload: recordBody(categoryId) });
    assert.equal(first.statusCode, 201);
    assert.equal(first.headers['x-idempotent-replay'], undefined);

    const second = await tenant.request({ method: 'POST', url: '/api/v1/records', headers: { 'idempotency-key': key }, payload: recordBody(categoryId) });
    assert.equal(second.statusCode, 201);
    assert.equal(second.headers['x-idempotent-replay'], 'true');
    assert.equal(second.body, first.body);
    assert.equal(second.headers.location, first.headers.location);
    assert.equal(second.headers.etag, first.headers.etag);
    assert.equal(second.headers['content-type'], first.headers['content-type']);
    assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/records' })).json().total, 1);
  });

  itOnEachDatabase('replays a 4xx answer too, since it was the outcome of that request', async ({ newTenant }) => {
    const tenant = await newTenant();
    const key = randomUUID();
    const body = recordBody('cat_01JD3Q4W8Y6V3C0M2ZP4K7N9XA');
    const first = await tenant.request({ method: 'POST', url: '/api/v1/records', headers: { 'idempotency-key': key }, payload: body });
    assert.equal(first.statusCode, 422);
    const again = await tenant.request({ method: 'POST', url: '/api/v1/records', headers: { 'idempotency-key': key }, payload: body });
    assert.equal(again.statusCode, 422);
    assert.equal(again.headers['x-idempotent-replay'], 'true');
    assert.match(String(again.headers['content-type']), /^application\/problem\+json/);
  });

  itOnEachDatabase('replays a stored success even when the work would now fail: the key is checked before an error is answered', async ({ newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const key = randomUUID();
    const created = await tenant.request({ method: 'POST', url: '/api/v1/records', headers: { 'idempotency-key': key }, payload: recordBody(categoryId, { assignee: 'Tech' }) });
    assert.equal(created.statusCode, 201);
    // A lifecycle action that succeeded, retried once the work order has moved on: run again, it would be a 409.
    const id = created.json().id as string;
    const startKey = randomUUID();
    const started = await tenant.request({ method: 'POST', url: `/api/v1/records/${id}/start`, headers: { 'idempotency-key': startKey }, payload: {} });
    assert.equal(started.statusCode, 200, started.body);
    const completed = await tenant.request({ method: 'POST', url: `/api/v1/records/${id}/complete`, payload: { resolutionNotes: 'Fixed.' } });
    assert.equal(completed.statusCode, 200, completed.body);
    const retried = await tenant.request({ method: 'POST', url: `/api/v1/records/${id}/start`, headers: { 'idempotency-key': startKey }, payload: {} });
    assert.equal(retried.statusCode, 200);
    assert.equal(retried.headers['x-idempotent-replay'], 'true');
    assert.equal(retried.body, started.body);
  });

  itOnEachDatabase('answers 422 when the key is reused with another body or another path', async ({ newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const key = randomUUID();
    await tenant.request({ method: 'POST', url: '/api/v1/records', headers: { 'idempotency-key': key }, payload: recordBody(categoryId) });
    const otherBody = await tenant.request({ method: 'POST', url: '/api/v1/records', headers: { 'idempotency-key': key }, payload: recordBody(categoryId, { description: 'different' }) });
    assert.equal(otherBody.statusCode, 422);
    assert.equal(otherBody.json().code, 'idempotency_key_mismatch');
    const otherPath = await tenant.request({ method: 'POST', url: '/api/v1/categories', headers: { 'idempotency-key': key }, payload: { name: 'Electrical' } });
    assert.equal(otherPath.statusCode, 422);
    assert.equal(otherPath.json().code, 'idempotency_key_mismatch');
  });

  itOnEachDatabase('scopes keys to the organization: two organizations may use the same key', async ({ newTenant }) => {
    const a = await newTenant();
    const b = await newTenant();
    const key = randomUUID();
    const ra = await a.request({ method: 'POST', url: '/api/v1/categories', headers: { 'idempotency-key': key }, payload: { name: 'HVAC' } });
    const rb = await b.request({ method: 'POST', url: '/api/v1/categories', headers: { 'idempotency-key': key }, payload: { name: 'HVAC' } });
    assert.equal(ra.statusCode, 201);
    assert.equal(rb.statusCode, 201);
    assert.equal(rb.headers['x-idempotent-replay'], undefined);
    assert.notEqual(ra.json().id, rb.json().id);
  });

  itOnEachDatabase('recognises a retry whose body was serialized again with another key order and spacing', async ({ newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const key = randomUUID();
    const body = recordBody(categoryId, { metadata: { unit: '4B', floor: 4 } });
    const send = (payload: string) => tenant.request({ method: 'POST', url: '/api/v1/records', headers: { 'idempotency-key': key, 'content-type': 'application/json' }, payload });
    const first = await send(JSON.stringify(body));
    assert.equal(first.statusCode, 201);
    const reordered = Object.fromEntries(Object.entries({ ...body, metadata: { floor: 4, unit: '4B' } }).reverse());
    const again = await send(JSON.stringify(reordered, null, 2));
    assert.equal(again.statusCode, 201, again.body);
    assert.equal(again.headers['x-idempotent-replay'], 'true');
    assert.equal(again.json().id, first.json().id);
    // Same bytes but another value is still another request.
    assert.equal((await send(JSON.stringify({ ...body, metadata: { unit: '4B', floor: 5 } }))).json().code, 'idempotency_key_mismatch');
  });

  itOnEachDatabase('stays compatible with releases that compare raw bytes only, in both directions of a rolling upgrade', async ({ newTenant, context }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const body = JSON.stringify(recordBody(categoryId));
    const { requestFingerprint } = await import('../../src/idempotency/fingerprint.js');
    const { raw } = requestFingerprint({ method: 'POST', url: '/api/v1/records', rawBody: body });
    const send = (key: string) => tenant.request({ method: 'POST', url: '/api/v1/records', headers: { 'idempotency-key': key, 'content-type': 'application/json' }, payload: body });

    // A claim an earlier release holds (raw bytes, no value fingerprint) is the same request here.
    const olderClaim = randomUUID();
    assert.equal((await context.idempotency.claim(tenant.orgId, olderClaim, { raw, value: null })).kind, 'claimed');
    assert.equal((await send(olderClaim)).json().code, 'idempotency_key_in_use', 'the same request, still running: not a mismatch');

    // A claim this release stores keeps the raw-bytes fingerprint where earlier releases compare it.
    const newerClaim = randomUUID();
    assert.equal((await send(newerClaim)).statusCode, 201);
    const row = await context.database.db.selectFrom('idempotency_keys').select(['fingerprint', 'value_fingerprint']).where('org_id', '=', tenant.orgId).where('key', '=', newerClaim).executeTakeFirstOrThrow();
    assert.equal(row.fingerprint, raw);
    assert.match(row.value_fingerprint ?? '', /^[0-9a-f]{64}$/);
    assert.notEqual(row.value_fingerprint, raw);
  });

  itOnEachDatabase('answers 409 while the first request with the key is still in flight', async ({ newTenant, context }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const key = randomUUID();
    const body = JSON.stringify(recordBody(categoryId));
    // Claim the key exactly as a request being processed elsewhere would.
    const { requestFingerprint } = await import('../../src/idempotency/fingerprint.js');
    const fingerprint = requestFingerprint({ method: 'POST', url: '/api/v1/records', rawBody: body });
    assert.equal((await context.idempotency.claim(tenant.orgId, key, fingerprint)).kind, 'claimed');
    const response = await tenant.request({ method: 'POST', url: '/api/v1/records', headers: { 'idempotency-key': key, 'content-type': 'application/json' }, payload: body });
    assert.equal(response.statusCode, 409);
    assert.equal(response.json().code, 'idempotency_key_in_use');
    assert.equal(response.headers['retry-after'], '1');
  });

  itOnEachDatabase('stores the answer even if the claim row was lost before it completed, so a retry replays it', async ({ newTenant, context }) => {
    // On SQLite a claim returns before its group commits; if that group failed, the claim row is gone
    // while the request's own transaction committed later. The answer must still be kept.
    const tenant = await newTenant();
    const key = randomUUID();
    const outcome = await context.idempotency.claim(tenant.orgId, key, { raw: 'fingerprint-lost', value: null });
    assert.equal(outcome.kind, 'claimed');
    if (outcome.kind !== 'claimed') return;
    await context.database.db.deleteFrom('idempotency_keys').where('org_id', '=', tenant.orgId).where('key', '=', key).execute();
    await context.idempotency.complete(outcome.claim, { status: 201, headers: { 'content-type': 'application/json' }, body: '{"id":"x"}' });
    const replay = await context.idempotency.claim(tenant.orgId, key, { raw: 'fingerprint-lost', value: null });
    assert.deepEqual(replay, { kind: 'replay', response: { status: 201, headers: { 'content-type': 'application/json' }, body: '{"id":"x"}' } });
    // A claim taken over by another request (a new lease) is not overwritten by the old holder.
    const other = randomUUID();
    const first = await context.idempotency.claim(tenant.orgId, other, { raw: 'f', value: null });
    if (first.kind !== 'claimed') return assert.fail('expected a claim');
    await context.database.db.updateTable('idempotency_keys').set({ locked_until: '2099-01-01T00:00:00.000Z' }).where('org_id', '=', tenant.orgId).where('key', '=', other).execute();
    await context.idempotency.complete(first.claim, { status: 201, headers: {}, body: 'stale' });
    const row = await context.database.db.selectFrom('idempotency_keys').selectAll().where('org_id', '=', tenant.orgId).where('key', '=', other).executeTakeFirstOrThrow();
    assert.equal(row.state, 'in_flight');
    assert.equal(row.response_body, null);
  });

  itOnEachDatabase('rejects keys longer than 255 characters with 400 and accepts exactly 255', async ({ newTenant }) => {
    const tenant = await newTenant();
    const tooLong = await tenant.request({ method: 'POST', url: '/api/v1/categories', headers: { 'idempotency-key': 'k'.repeat(256) }, payload: { name: 'A' } });
    assert.equal(tooLong.statusCode, 400);
    assert.equal(tooLong.json().code, 'invalid_idempotency_key');
    const longest = await tenant.request({ method: 'POST', url: '/api/v1/categories', headers: { 'idempotency-key': 'k'.repeat(255) }, payload: { name: 'B' } });
    assert.equal(longest.statusCode, 201);
  });

  itOnEachDatabase('does not store a 5xx: the retry runs again and succeeds', async ({ newTenant, context }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const key = randomUUID();
    // Break the write path for real: the records table disappears for the first attempt.
    await sql`ALTER TABLE records RENAME TO records_hidden`.execute(context.database.db);
    const failed = await tenant.request({ method: 'POST', url: '/api/v1/records', headers: { 'idempotency-key': key }, payload: recordBody(categoryId) });
    // A missing table reads as a database not migrated: 503, and a 503 is no more stored than a 500.
    assert.equal(failed.statusCode, 503);
    assert.equal(failed.json().code, 'unavailable');
    assert.ok(!/no such table|does not exist|SQLITE|stack|at /i.test(failed.json().detail), 'the database error does not reach the client');
    await sql`ALTER TABLE records_hidden RENAME TO records`.execute(context.database.db);

    const retried = await tenant.request({ method: 'POST', url: '/api/v1/records', headers: { 'idempotency-key': key }, payload: recordBody(categoryId) });
    assert.equal(retried.statusCode, 201);
    assert.equal(retried.headers['x-idempotent-replay'], undefined);
  });

  itOnEachDatabase('does not store a 409 conflict: the retry runs again once the conflict is resolved', async ({ newTenant }) => {
    const tenant = await newTenant();
    const { id } = (await tenant.request({ method: 'POST', url: '/api/v1/webhooks', payload: { name: 'paused', url: 'https://93.184.216.34/hooks', events: ['record.created'] } })).json();
    assert.equal((await tenant.request({ method: 'PATCH', url: `/api/v1/webhooks/${id}`, payload: { active: false } })).statusCode, 200);
    const key = randomUUID();
    const ping = () => tenant.request({ method: 'POST', url: `/api/v1/webhooks/${id}/ping`, headers: { 'idempotency-key': key } });

    const refused = await ping();
    assert.equal(refused.statusCode, 409);
    assert.equal(refused.json().code, 'conflict');
    const again = await ping();
    assert.equal(again.json().code, 'conflict');
    assert.equal(again.headers['x-idempotent-replay'], undefined, 'the conflict was not stored');

    assert.equal((await tenant.request({ method: 'PATCH', url: `/api/v1/webhooks/${id}`, payload: { active: true } })).statusCode, 200);
    const accepted = await ping();
    assert.ok(accepted.statusCode < 300, String(accepted.statusCode));
    assert.equal(accepted.headers['x-idempotent-replay'], undefined);
    assert.equal((await ping()).headers['x-idempotent-replay'], 'true', 'the outcome, once there is one, is stored');
  });

  itOnEachDatabase('stores a create’s answer in the create’s own transaction: an answer that cannot be stored takes the work order with it', async ({ newTenant, context }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const key = randomUUID();
    // Were the answer written after the work's own commit, the work order would exist now, and a
    // retry (its claim free again) would create a second one.
    await refuseStoredAnswers(context);
    const failed = await tenant.request({ method: 'POST', url: '/api/v1/records', headers: { 'idempotency-key': key }, payload: recordBody(categoryId) });
    assert.equal(failed.statusCode, 500);
    assert.equal(failed.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal(failed.headers.location, undefined, 'the failed answer points at no work order');
    assert.equal(failed.headers.etag, undefined);
    assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/records' })).json().total, 0, 'no work order without its answer');
    const events = await context.database.db.selectFrom('outbox_events').select('type').where('org_id', '=', tenant.orgId).execute();
    assert.deepEqual(events, [], 'and no event announcing it');
    await acceptStoredAnswers(context);

    const retried = await tenant.request({ method: 'POST', url: '/api/v1/records', headers: { 'idempotency-key': key }, payload: recordBody(categoryId) });
    assert.equal(retried.statusCode, 201);
    assert.equal(retried.headers['x-idempotent-replay'], undefined, 'the failed attempt left nothing to replay');
    const replayed = await tenant.request({ method: 'POST', url: '/api/v1/records', headers: { 'idempotency-key': key }, payload: recordBody(categoryId) });
    assert.equal(replayed.headers['x-idempotent-replay'], 'true');
    assert.equal(replayed.body, retried.body);
    assert.equal(replayed.headers['content-type'], retried.headers['content-type']);
    assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/records' })).json().total, 1);
  });

  itOnEachDatabase('stores the answer in the change’s transaction for every create and work-order action, and replays each byte for byte', async ({ newTenant, context }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const recordId = (await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId) })).json().id as string;
    const operations: Array<{ url: string; payload: Record<string, unknown>; unchanged: () => Promise<boolean> }> = [
      { url: '/api/v1/assets', payload: { name: 'Boiler', tag: 'B-1' }, unchanged: async () => (await tenant.request({ method: 'GET', url: '/api/v1/assets' })).json().total === 0 },
      { url: '/api/v1/locations', payload: { name: 'Block A' }, unchanged: async () => (await tenant.request({ method: 'GET', url: '/api/v1/locations' })).json().total === 0 },
      { url: '/api/v1/categories', payload: { name: 'Roofing' }, unchanged: async () => (await tenant.request({ method: 'GET', url: '/api/v1/categories' })).json().total === 1 },
      {
        url: '/api/v1/webhooks',
        payload: { name: 'erp', url: 'https://93.184.216.34/hooks', events: ['record.created'] },
        unchanged: async () => (await tenant.request({ method: 'GET', url: '/api/v1/webhooks' })).json().total === 0,
      },
      {
        url: `/api/v1/records/${recordId}/assign`,
        payload: { assignee: 'Technician 1' },
        unchanged: async () => (await tenant.request({ method: 'GET', url: `/api/v1/records/${recordId}` })).json().status === 'OPEN',
      },
    ];
    for (const operation of operations) {
      const key = randomUUID();
      await refuseStoredAnswers(context);
      const failed = await tenant.request({ method: 'POST', url: operation.url, headers: { 'idempotency-key': key }, payload: operation.payload });
      await acceptStoredAnswers(context);
      assert.equal(failed.statusCode, 500, operation.url);
      assert.ok(await operation.unchanged(), `${operation.url}: nothing changed without the answer`);

      const done = await tenant.request({ method: 'POST', url: operation.url, headers: { 'idempotency-key': key }, payload: operation.payload });
      assert.ok(done.statusCode === 200 || done.statusCode === 201, `${operation.url}: ${done.statusCode} ${done.body}`);
      assert.ok(!(await operation.unchanged()), `${operation.url}: the retry ran`);
      const replayed = await tenant.request({ method: 'POST', url: operation.url, headers: { 'idempotency-key': key }, payload: operation.payload });
      assert.equal(replayed.headers['x-idempotent-replay'], 'true', operation.url);
      assert.equal(replayed.statusCode, done.statusCode, operation.url);
      assert.equal(replayed.body, done.body, operation.url);
      for (const header of ['content-type', 'location', 'etag']) assert.equal(replayed.headers[header], done.headers[header], `${operation.url}: ${header}`);
    }
    // The webhook's secret was stored sealed and is shown in the clear, the same on replay.
    const webhookKey = randomUUID();
    const payload = { name: 'second', url: 'https://93.184.216.34/other', events: ['record.created'] };
    const created = await tenant.request({ method: 'POST', url: '/api/v1/webhooks', headers: { 'idempotency-key': webhookKey }, payload });
    assert.match(created.json().secret, /^whsec_/);
    const stored = await context.database.db.selectFrom('idempotency_keys').select('response_body').where('key', '=', webhookKey).executeTakeFirstOrThrow();
    assert.ok(!stored.response_body!.includes(created.json().secret), 'the stored answer does not hold the secret in the clear');
    const replayedWebhook = await tenant.request({ method: 'POST', url: '/api/v1/webhooks', headers: { 'idempotency-key': webhookKey }, payload });
    assert.equal(replayedWebhook.headers['x-idempotent-replay'], 'true');
    assert.equal(replayedWebhook.json().secret, created.json().secret, 'the replay shows the same secret');
  });

  itOnEachDatabase('frees a key after 24 hours', async ({ newTenant, context }) => {
    const clock = context.clock as TestClock;
    const tenant = await newTenant();
    const key = randomUUID();
    const first = await tenant.request({ method: 'POST', url: '/api/v1/categories', headers: { 'idempotency-key': key }, payload: { name: 'Roofing' } });
    clock.advance(23 * 3_600_000);
    const replay = await tenant.request({ method: 'POST', url: '/api/v1/categories', headers: { 'idempotency-key': key }, payload: { name: 'Roofing' } });
    assert.equal(replay.headers['x-idempotent-replay'], 'true');
    assert.equal(replay.json().id, first.json().id);
    clock.advance(1 * 3_600_000 + 1);
    const fresh = await tenant.request({ method: 'POST', url: '/api/v1/categories', headers: { 'idempotency-key': key }, payload: { name: 'Roofing' } });
    assert.equal(fresh.headers['x-idempotent-replay'], undefined);
    assert.equal(fresh.statusCode, 409, 'executed again: the name is now taken');
    assert.equal(await context.idempotency.purgeExpired(), 0, 'the re-executed key is fresh and kept');
  }, { clock: new TestClock() });

  itOnEachDatabase('50 concurrent requests with one key create exactly one work order', async ({ newTenant, app }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const key = randomUUID();
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address() as { port: number };
    const responses = await Promise.all(
      Array.from({ length: 50 }, () =>
        fetch(`http://127.0.0.1:${address.port}/api/v1/records`, {
          method: 'POST',
          headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json', 'idempotency-key': key },
          body: JSON.stringify(recordBody(categoryId)),
        }).then(async (r) => ({ status: r.status, replay: r.headers.get('x-idempotent-replay'), body: await r.json() })),
      ),
    );
    const created = responses.filter((r) => r.status === 201);
    assert.ok(created.length >= 1);
    assert.ok(responses.every((r) => r.status === 201 || (r.status === 409 && r.body.code === 'idempotency_key_in_use')), JSON.stringify(responses.map((r) => r.status)));
    assert.equal(new Set(created.map((r) => r.body.id)).size, 1, 'every success names the same work order');
    assert.equal(created.filter((r) => r.replay === null).length, 1, 'exactly one response is the original');
    assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/records' })).json().total, 1);
  });
});
