// On PostgreSQL a create claims its Idempotency-Key inside its own transaction (IdempotencyStore.defersClaims):
// the claim dies with the session of a process that dies mid-request, and concurrent retries wait for the
// first and replay it instead of answering 409.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { POSTGRES_URL } from '../helpers/databases.js';
import { recordBody, seedCategory, startTestApp, waitFor, type TestApp } from '../helpers/test-app.js';

if (POSTGRES_URL) {
  describe('Idempotency-Key claims on PostgreSQL', () => {
    let harness: TestApp;
    before(async () => {
      harness = await startTestApp('postgres');
    });
    after(() => harness?.close());

    it('answers 20 concurrent requests with one key with one original 201 and 19 replays of it', async () => {
      const tenant = await harness.newTenant();
      const categoryId = await seedCategory(tenant);
      const key = randomUUID();
      const payload = recordBody(categoryId);
      const responses = await Promise.all(
        Array.from({ length: 20 }, () => tenant.request({ method: 'POST', url: '/api/v1/records', headers: { 'idempotency-key': key }, payload })),
      );
      assert.deepEqual(new Set(responses.map((r) => r.statusCode)), new Set([201]), responses.map((r) => r.body).join('\n'));
      assert.equal(responses.filter((r) => r.headers['x-idempotent-replay'] === undefined).length, 1, 'one original');
      assert.equal(new Set(responses.map((r) => r.json().id)).size, 1, 'every answer names the same work order');
      assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/records' })).json().total, 1);
    });

    it('writes no claim row before the work commits: the claim and the answer are one insert', async () => {
      const tenant = await harness.newTenant();
      const categoryId = await seedCategory(tenant);
      const key = randomUUID();
      const created = await tenant.request({ method: 'POST', url: '/api/v1/records', headers: { 'idempotency-key': key }, payload: recordBody(categoryId) });
      assert.equal(created.statusCode, 201);
      const rows = await harness.context.database.db.selectFrom('idempotency_keys').select(['state', 'response_status']).where('org_id', '=', tenant.orgId).execute();
      assert.deepEqual(rows, [{ state: 'completed', response_status: 201 }]);
    });

    it('lets a retry run the work at once when the request holding the key dies with its session', async () => {
      const tenant = await harness.newTenant();
      const categoryId = await seedCategory(tenant);
      const key = randomUUID();
      const payload = recordBody(categoryId);
      // A request in another process, mid-transaction: its answer's row is inserted but not committed.
      const owner = new pg.Client({ connectionString: POSTGRES_URL });
      await owner.connect();
      owner.on('error', () => {}); // terminated below, on purpose
      await owner.query(`SET search_path TO "${harness.context.database.schema}"`);
      await owner.query('BEGIN');
      await owner.query(
        `INSERT INTO idempotency_keys (org_id, key, fingerprint, value_fingerprint, created_at, locked_until, state, response_status, response_headers, response_body)
         VALUES ($1, $2, 'other', NULL, $3, $3, 'completed', 201, '{}', '{}')`,
        [tenant.orgId, key, new Date().toISOString()],
      );
      const { rows } = await owner.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');

      let answered = false;
      const retry = tenant.request({ method: 'POST', url: '/api/v1/records', headers: { 'idempotency-key': key }, payload }).finally(() => {
        answered = true;
      });
      // The retry waits on the owner's uncommitted row…
      const admin = new pg.Client({ connectionString: POSTGRES_URL });
      await admin.connect();
      try {
        await waitFor(async () => {
          const waiting = await admin.query(`SELECT 1 FROM pg_locks WHERE NOT granted AND locktype = 'transactionid'`);
          return waiting.rowCount! > 0;
        }, 10_000, 'the retry waiting on the owner');
        assert.equal(answered, false);
        // …until the owner's process dies: its session ends, its claim with it, and the retry runs.
        const killedAt = Date.now();
        await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
        const response = await retry;
        assert.equal(response.statusCode, 201, response.body);
        assert.equal(response.headers['x-idempotent-replay'], undefined, 'the work ran here, once');
        assert.ok(Date.now() - killedAt < 5_000, 'taken over within seconds');
        assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/records' })).json().total, 1);
      } finally {
        await admin.end();
        await owner.end().catch(() => {});
      }
    });

    // Every operation that stores its answer with its change (docs/api.md lists them) claims its key
    // in that change's transaction: a process killed while the work waits leaves no claim behind, where
    // a claim committed up front held the key for its 60 s lease.
    const operations: { name: string; table: string; request: (categoryId: string, recordId: string) => { url: string; payload: object } }[] = [
      { name: 'a work-order create', table: 'records', request: (categoryId) => ({ url: '/api/v1/records', payload: recordBody(categoryId) }) },
      { name: 'a webhook subscription', table: 'webhook_subscriptions', request: () => ({ url: '/api/v1/webhooks', payload: { name: 'w', url: 'https://93.184.216.34/hook', events: ['record.created'] } }) },
      { name: 'a comment', table: 'record_comments', request: (_categoryId, recordId) => ({ url: `/api/v1/records/${recordId}/comments`, payload: { body: 'on my way' } }) },
      { name: 'a lifecycle action', table: 'records', request: (_categoryId, recordId) => ({ url: `/api/v1/records/${recordId}/assign`, payload: { assignee: 'Tech' } }) },
    ];
    for (const operation of operations) {
      it(`commits no claim for ${operation.name} before its work: while the work waits, no row holds the key`, async () => {
        const tenant = await harness.newTenant();
        const categoryId = await seedCategory(tenant);
        const record = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId) });
        assert.equal(record.statusCode, 201, record.body);
        const key = randomUUID();
        const { url, payload } = operation.request(categoryId, record.json().id as string);
        const schema = harness.context.database.schema;
        // Writes to the operation's table wait behind this lock; reads (the key, the work order) do not.
        const blocker = new pg.Client({ connectionString: POSTGRES_URL });
        const admin = new pg.Client({ connectionString: POSTGRES_URL });
        await blocker.connect();
        await admin.connect();
        try {
          await blocker.query(`SET search_path TO "${schema}"`);
          await blocker.query('BEGIN');
          await blocker.query(`LOCK TABLE ${operation.table} IN EXCLUSIVE MODE`);
          const answer = tenant.request({ method: 'POST', url, headers: { 'idempotency-key': key }, payload });
          await waitFor(async () => {
            const waiting = await admin.query(`SELECT 1 FROM pg_locks WHERE NOT granted AND locktype = 'relation'`);
            return waiting.rowCount! > 0;
          }, 10_000, 'the request waiting for the table');
          const claimed = await admin.query(`SELECT state FROM "${schema}".idempotency_keys WHERE org_id = $1 AND key = $2`, [tenant.orgId, key]);
          assert.deepEqual(claimed.rows, [], 'no claim committed while the work waits');
          await blocker.query('COMMIT');
          const response = await answer;
          assert.ok(response.statusCode === 200 || response.statusCode === 201, response.body);
          const stored = await admin.query(`SELECT state, response_status FROM "${schema}".idempotency_keys WHERE org_id = $1 AND key = $2`, [tenant.orgId, key]);
          assert.deepEqual(stored.rows, [{ state: 'completed', response_status: response.statusCode }]);
        } finally {
          await blocker.end();
          await admin.end();
        }
      });
    }
  });
}
