import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { TEST_DIALECTS } from '../helpers/databases.js';
import { startTestApp, type TestApp, type Tenant } from '../helpers/test-app.js';
import { EVENT_TYPES } from '../../src/features.js';
import { newDeliveryRow } from '../../src/webhooks/repository.js';

const PUBLIC_URL = 'https://93.184.216.34/hooks/work-orders';

for (const dialect of TEST_DIALECTS) {
  describe(`webhook subscriptions (${dialect})`, () => {
    let t: TestApp;
    let tenant: Tenant;
    before(async () => {
      // The guard is on here, as in production.
      t = await startTestApp(dialect, { env: { WO_WEBHOOK_ALLOW_PRIVATE_URLS: 'false' } });
      tenant = await t.newTenant();
    });
    after(async () => t.close());

    const create = (body: Record<string, unknown>, who = tenant) => who.request({ method: 'POST', url: '/api/v1/webhooks', payload: body });

    it('creates a subscription and shows its secret exactly once', async () => {
      const created = await create({ name: 'ERP', url: PUBLIC_URL, events: ['record.created', 'record.status_changed'] });
      assert.equal(created.statusCode, 201);
      const body = created.json();
      assert.match(body.id, /^whk_/);
      assert.match(body.secret, /^whsec_/);
      assert.equal(body.url, PUBLIC_URL);
      assert.deepEqual(body.events, ['record.created', 'record.status_changed']);
      assert.equal(body.active, true);
      assert.equal(created.headers.location, `/api/v1/webhooks/${body.id}`);
      assert.equal(created.headers.etag, '"1"');

      const one = await tenant.request({ method: 'GET', url: `/api/v1/webhooks/${body.id}` });
      assert.equal(one.statusCode, 200);
      assert.equal(one.json().secret, undefined);
      assert.ok(!one.body.includes(body.secret));
      const list = await tenant.request({ method: 'GET', url: '/api/v1/webhooks' });
      assert.ok(!list.body.includes(body.secret));
      assert.ok(list.json().webhooks.every((w: Record<string, unknown>) => w.secret === undefined));
    });

    it('keeps the secret out of the database in clear text', async () => {
      const { json } = await create({ name: 'dump check', url: PUBLIC_URL, events: ['record.created'] });
      const { secret, id } = json();
      const row = await t.context.database.db.selectFrom('webhook_subscriptions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      assert.ok(!JSON.stringify(row).includes(secret));
      assert.ok(!JSON.stringify(row).includes(secret.slice('whsec_'.length, 20)));
      if (dialect === 'sqlite') {
        const files = readdirSync(t.dataDir).filter((f) => f.startsWith('wo.sqlite'));
        for (const file of files) assert.ok(!readFileSync(path.join(t.dataDir, file)).includes(secret), `${file} holds the secret`);
      }
    });

    it('lists subscriptions in the list envelope with paging', async () => {
      const other = await t.newTenant();
      for (let i = 0; i < 3; i++) assert.equal((await create({ name: `hook ${i}`, url: PUBLIC_URL, events: ['record.closed'] }, other)).statusCode, 201);
      const page = await other.request({ method: 'GET', url: '/api/v1/webhooks?limit=2&offset=1' });
      assert.equal(page.statusCode, 200);
      const body = page.json();
      assert.deepEqual(Object.keys(body).sort(), ['limit', 'offset', 'total', 'webhooks']);
      assert.equal(body.total, 3);
      assert.equal(body.limit, 2);
      assert.equal(body.offset, 1);
      assert.deepEqual(body.webhooks.map((w: { name: string }) => w.name), ['hook 1', 'hook 0']);
      assert.equal((await other.request({ method: 'GET', url: '/api/v1/webhooks?limit=101' })).statusCode, 400);
    });

    it('refuses unknown event names with 422 listing the known ones', async () => {
      const response = await create({ name: 'typo', url: PUBLIC_URL, events: ['record.created', 'record.exploded'] });
      assert.equal(response.statusCode, 422);
      const problem = response.json();
      assert.equal(problem.code, 'unprocessable_entity');
      assert.deepEqual(problem.knownEvents, EVENT_TYPES);
      assert.equal(problem.errors[0].field, 'body.events.1');
      assert.match(problem.errors[0].message, /record\.exploded/);
      assert.equal((await create({ name: 'ping', url: PUBLIC_URL, events: ['webhook.ping'] })).statusCode, 422);
    });

    it('validates the body: name, url and a non-empty list of events are required', async () => {
      assert.equal((await create({ url: PUBLIC_URL, events: ['record.created'] })).statusCode, 400);
      assert.equal((await create({ name: 'x', events: ['record.created'] })).statusCode, 400);
      assert.equal((await create({ name: 'x', url: PUBLIC_URL, events: [] })).statusCode, 400);
      assert.equal((await create({ name: 'x', url: PUBLIC_URL, events: ['record.created', 'record.created'] })).statusCode, 400);
      assert.equal((await create({ name: 'x', url: PUBLIC_URL, events: ['record.created'], secret: 'mine' })).statusCode, 400);
    });

    it('refuses URLs that are not public http(s) with 422', async () => {
      for (const url of [
        'ftp://93.184.216.34/x',
        'hooks.example.com/path',
        'http://127.0.0.1:8080/hook',
        'http://localhost/hook',
        'http://10.0.0.8/hook',
        'http://192.168.1.20/hook',
        'http://169.254.169.254/latest/meta-data/',
        'http://[::1]/hook',
        'http://[::ffff:127.0.0.1]/hook',
        'http://0x7f000001/hook',
        'http://100.64.0.1/hook',
        'http://[::127.0.0.1]/hook',
        'http://[::10.0.0.1]/hook',
        'http://[::169.254.169.254]/hook',
        'http://[::2]/hook',
        'http://[4000::1]/hook',
        'http://[e000::1]/hook',
        'http://[64:ff9b::10.0.0.1]/hook',
        'http://[2002:a9fe:a9fe::1]/hook',
      ]) {
        const response = await create({ name: 'bad', url, events: ['record.created'] });
        assert.equal(response.statusCode, 422, url);
        assert.equal(response.json().errors[0].field, 'body.url');
      }
    });

    it('names the ways out when a receiver URL is loopback or private: wo listen, and WO_WEBHOOK_ALLOW_PRIVATE_URLS with its restart', async () => {
      for (const url of ['http://localhost:3000/webhooks', 'http://192.168.1.20/hook']) {
        const { detail } = (await create({ name: 'local', url, events: ['record.created'] })).json();
        assert.match(detail, /npx wo listen --forward-to/, url);
        assert.match(detail, /WO_WEBHOOK_ALLOW_PRIVATE_URLS=true \(read at start, so it takes a restart/, url);
      }
      // A URL that is not even well-formed has nothing to do with either.
      const { detail } = (await create({ name: 'bad', url: 'ftp://93.184.216.34/x', events: ['record.created'] })).json();
      assert.doesNotMatch(detail, /wo listen|WO_WEBHOOK_ALLOW_PRIVATE_URLS/);
    });

    it('updates name, url, events and active, honouring If-Match', async () => {
      const { id } = (await create({ name: 'before', url: PUBLIC_URL, events: ['record.created'] })).json();
      const stale = await tenant.request({ method: 'PATCH', url: `/api/v1/webhooks/${id}`, headers: { 'if-match': '"7"' }, payload: { name: 'x' } });
      assert.equal(stale.statusCode, 412);
      const patched = await tenant.request({
        method: 'PATCH',
        url: `/api/v1/webhooks/${id}`,
        headers: { 'if-match': '"1"' },
        payload: { name: 'after', url: 'https://93.184.216.35/v2', events: ['record.closed', 'record.completed'], active: false },
      });
      assert.equal(patched.statusCode, 200);
      assert.equal(patched.headers.etag, '"2"');
      const body = patched.json();
      assert.equal(body.name, 'after');
      assert.equal(body.url, 'https://93.184.216.35/v2');
      assert.deepEqual(body.events, ['record.closed', 'record.completed']);
      assert.equal(body.active, false);
      assert.equal((await tenant.request({ method: 'PATCH', url: `/api/v1/webhooks/${id}`, payload: { url: 'http://127.0.0.1/x' } })).statusCode, 422);
      assert.equal((await tenant.request({ method: 'PATCH', url: `/api/v1/webhooks/${id}`, payload: { events: ['nope'] } })).statusCode, 422);
      assert.equal((await tenant.request({ method: 'PATCH', url: `/api/v1/webhooks/${id}`, payload: {} })).statusCode, 400);
    });

    it('rotates the secret: the new one is shown once and differs', async () => {
      const created = (await create({ name: 'rotate', url: PUBLIC_URL, events: ['record.created'] })).json();
      const rotated = await tenant.request({ method: 'POST', url: `/api/v1/webhooks/${created.id}/rotate-secret` });
      assert.equal(rotated.statusCode, 200);
      const body = rotated.json();
      assert.match(body.secret, /^whsec_/);
      assert.notEqual(body.secret, created.secret);
      assert.ok(body.previousSecretExpiresAt > new Date().toISOString());
      const immediate = await tenant.request({ method: 'POST', url: `/api/v1/webhooks/${created.id}/rotate-secret`, payload: { overlapSeconds: 0 } });
      assert.equal(immediate.statusCode, 200);
      assert.equal(immediate.json().previousSecretExpiresAt, null);
      assert.ok(!(await tenant.request({ method: 'GET', url: `/api/v1/webhooks/${created.id}` })).body.includes(immediate.json().secret));
    });

    it('deletes a subscription', async () => {
      const { id } = (await create({ name: 'gone', url: PUBLIC_URL, events: ['record.created'] })).json();
      assert.equal((await tenant.request({ method: 'DELETE', url: `/api/v1/webhooks/${id}` })).statusCode, 204);
      assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/webhooks/${id}` })).statusCode, 404);
      assert.equal((await tenant.request({ method: 'DELETE', url: `/api/v1/webhooks/${id}` })).statusCode, 404);
    });

    it('hides other organizations’ subscriptions behind 404', async () => {
      const { id } = (await create({ name: 'mine', url: PUBLIC_URL, events: ['record.created'] })).json();
      const stranger = await t.newTenant();
      for (const [method, url] of [
        ['GET', `/api/v1/webhooks/${id}`],
        ['PATCH', `/api/v1/webhooks/${id}`],
        ['DELETE', `/api/v1/webhooks/${id}`],
        ['POST', `/api/v1/webhooks/${id}/rotate-secret`],
        ['POST', `/api/v1/webhooks/${id}/ping`],
        ['GET', `/api/v1/webhooks/${id}/deliveries`],
      ] as const) {
        const response = await stranger.request({ method, url, ...(method === 'PATCH' ? { payload: { name: 'stolen' } } : {}) });
        assert.equal(response.statusCode, 404, `${method} ${url}`);
      }
      assert.equal((await stranger.request({ method: 'GET', url: '/api/v1/webhooks' })).json().total, 0);
    });

    it('requires the webhooks:manage scope', async () => {
      const reader = await t.newTenant(['records:read']);
      const response = await reader.request({ method: 'POST', url: '/api/v1/webhooks', payload: { name: 'x', url: PUBLIC_URL, events: ['record.created'] } });
      assert.equal(response.statusCode, 403);
      assert.equal(response.json().code, 'insufficient_scope');
      assert.equal((await t.app.inject({ method: 'GET', url: '/api/v1/webhooks' })).statusCode, 401);
    });

    it('purges finished deliveries older than the retention period with their attempts, and nothing else', async () => {
      const { id } = (await create({ name: 'retention', url: PUBLIC_URL, events: ['record.created'] })).json();
      const db = t.context.database.db;
      const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString();
      const row = (status: 'succeeded' | 'failed' | 'pending', completedAt: string | null) => ({
        ...newDeliveryRow({ id, org_id: tenant.orgId }, { eventId: 'evt_x', eventType: 'record.created', body: '{}', now: daysAgo(40) }),
        status,
        completed_at: completedAt,
        next_attempt_at: status === 'pending' ? daysAgo(40) : null,
      });
      const old = row('succeeded', daysAgo(40));
      const oldFailed = row('failed', daysAgo(31));
      const recent = row('succeeded', daysAgo(2));
      const stillPending = row('pending', null);
      await db.insertInto('webhook_deliveries').values([old, oldFailed, recent, stillPending]).execute();
      await db
        .insertInto('webhook_attempts')
        .values([old, recent].map((d, i) => ({ id: `att_${i}${id}`, delivery_id: d.id, attempt: 1, started_at: d.created_at, duration_ms: 5, status_code: 200, error: null, response_excerpt: null })))
        .execute();

      assert.equal(await t.context.webhooks.purgeOldDeliveries(30), 2);
      const left = await db.selectFrom('webhook_deliveries').select('id').where('subscription_id', '=', id).execute();
      assert.deepEqual(left.map((r) => r.id).sort(), [recent.id, stillPending.id].sort());
      const attempts = await db.selectFrom('webhook_attempts').select('delivery_id').where('delivery_id', 'in', [old.id, recent.id]).execute();
      assert.deepEqual(attempts.map((a) => a.delivery_id), [recent.id]);
    });

    it('replays a create sent again with the same Idempotency-Key instead of making a second subscription', async () => {
      const other = await t.newTenant();
      const send = () =>
        other.request({ method: 'POST', url: '/api/v1/webhooks', headers: { 'idempotency-key': 'c0ffee00-0000-4000-8000-000000000001' }, payload: { name: 'once', url: PUBLIC_URL, events: ['record.created'] } });
      const first = await send();
      const second = await send();
      assert.equal(first.statusCode, 201);
      assert.equal(second.headers['x-idempotent-replay'], 'true');
      // The replay shows the same secret, although the stored response holds it only encrypted.
      assert.match(first.json().secret, /^whsec_/);
      assert.equal(second.json().secret, first.json().secret);
      const stored = await t.context.database.db.selectFrom('idempotency_keys').select('response_body').where('org_id', '=', other.orgId).executeTakeFirstOrThrow();
      assert.ok(!stored.response_body!.includes(first.json().secret));
      assert.equal((await other.request({ method: 'GET', url: '/api/v1/webhooks' })).json().total, 1);
    });
  });
}
