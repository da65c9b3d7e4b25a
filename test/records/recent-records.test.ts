import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createPostgresDatabase, POSTGRES_URL } from '../helpers/databases.js';
import { recordBody, seedCategory, startTestApp, waitFor, type TestApp, type Tenant } from '../helpers/test-app.js';

/**
 * On PostgreSQL an API process decides a lifecycle action from the copy of the work order it last
 * created, changed or read, instead of reading it again (RecentRecords). Two API processes on one
 * database, each with its own memory: what one changes makes the other's copy stale, and the other
 * must still answer exactly what a fresh read would have led to.
 */
if (POSTGRES_URL) {
  describe('work orders remembered by an API process (PostgreSQL)', () => {
    let database: { url: string; drop: () => Promise<void> };
    let keysDir: string;
    let first: TestApp;
    let second: TestApp;
    let admin: pg.Client;
    /** The same organization and key, through either process. */
    let viaFirst: Tenant;
    let viaSecond: Tenant['request'];
    let categoryId: string;

    before(async () => {
      database = await createPostgresDatabase('wo_recent');
      keysDir = mkdtempSync(path.join(tmpdir(), 'wo-recent-keys-'));
      // One deployment: both processes share the secret key and the signing keys.
      const env = { WO_SECRET_KEY: randomBytes(32).toString('hex'), WO_KEYS_DIR: keysDir, WO_RATE_LIMIT_PER_MINUTE: '0' };
      first = await startTestApp('postgres', { databaseUrl: database.url, env });
      second = await startTestApp('postgres', { databaseUrl: database.url, env });
      viaFirst = await first.newTenant();
      viaSecond = (options) => second.app.inject({ ...options, headers: { authorization: `Bearer ${viaFirst.key}`, ...options.headers } });
      categoryId = await seedCategory(viaFirst);
      admin = new pg.Client({ connectionString: database.url });
      await admin.connect();
    });
    after(async () => {
      await first?.close();
      await second?.close();
      await admin?.end();
      await database?.drop();
      rmSync(keysDir, { recursive: true, force: true });
    });

    async function create(overrides: Record<string, unknown> = {}): Promise<string> {
      const created = await viaFirst.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, overrides) });
      assert.equal(created.statusCode, 201, created.body);
      return created.json().id as string;
    }

    it('decides from the copy it remembers, without reading the work order again', async () => {
      const id = await create({ description: 'As created' });
      // A change that, against the rules, leaves the version alone: only a process that reads sees it.
      await admin.query(`UPDATE records SET description = 'Changed without a new version' WHERE id = $1`, [id]);

      const fromMemory = await viaFirst.request({ method: 'POST', url: `/api/v1/records/${id}/assign`, payload: { assignee: 'Ann' } });
      assert.equal(fromMemory.statusCode, 200, fromMemory.body);
      assert.equal(fromMemory.json().description, 'As created', 'the process that created it decided from its copy');

      const fromRead = await viaSecond({ method: 'POST', url: `/api/v1/records/${id}/start`, payload: {} });
      assert.equal(fromRead.statusCode, 200, fromRead.body);
      assert.equal(fromRead.json().description, 'Changed without a new version', 'a process with no copy read the row');
    });

    it('answers what the row as it stands leads to when another process changed it meanwhile', async () => {
      const id = await create({ assignee: 'Ann' }); // ASSIGNED, version 1, remembered by the first process

      const started = await viaSecond({ method: 'POST', url: `/api/v1/records/${id}/start`, payload: {} });
      assert.equal(started.statusCode, 200, started.body);

      // The copy says ASSIGNED, where start is allowed; the row says IN_PROGRESS, where it is not.
      const again = await viaFirst.request({ method: 'POST', url: `/api/v1/records/${id}/start`, payload: {} });
      assert.equal(again.statusCode, 409, again.body);
      assert.equal(again.json().code, 'invalid_transition');

      // The copy says ASSIGNED, where hold is refused; the row allows it.
      const held = await viaFirst.request({ method: 'POST', url: `/api/v1/records/${id}/hold`, payload: { reason: 'Waiting for parts' } });
      assert.equal(held.statusCode, 200, held.body);
      assert.equal(held.json().status, 'ON_HOLD');
      assert.equal(held.json().version, 3);

      const resumed = await viaSecond({ method: 'POST', url: `/api/v1/records/${id}/resume`, payload: {} });
      assert.equal(resumed.statusCode, 200, resumed.body);
      // The first process's copy (version 3) is stale again; its write answers the row (version 4) and succeeds.
      const completed = await viaFirst.request({ method: 'POST', url: `/api/v1/records/${id}/complete`, payload: { resolutionNotes: 'Fixed' } });
      assert.equal(completed.statusCode, 200, completed.body);
      assert.deepEqual([completed.json().status, completed.json().version], ['COMPLETED', 5]);

      const history = await viaSecond({ method: 'GET', url: `/api/v1/records/${id}/events` });
      assert.deepEqual(
        history.json().events.map((entry: { action: string; fromStatus: string | null; toStatus: string | null }) => `${entry.action}:${entry.fromStatus}>${entry.toStatus}`),
        ['created:null>ASSIGNED', 'start:ASSIGNED>IN_PROGRESS', 'hold:IN_PROGRESS>ON_HOLD', 'resume:ON_HOLD>IN_PROGRESS', 'complete:IN_PROGRESS>COMPLETED'],
      );
      const { rows } = await admin.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM records GROUP BY status`);
      const listed = await viaSecond({ method: 'GET', url: '/api/v1/records?status=COMPLETED' });
      assert.equal(listed.json().total, rows.find((row) => row.status === 'COMPLETED')?.n, 'the count moved once, from the status the row really left');
    });

    it('checks If-Match against the row as it stands, not against a stale copy', async () => {
      const id = await create();
      const edited = await viaSecond({ method: 'PATCH', url: `/api/v1/records/${id}`, payload: { priority: 'HIGH' } });
      assert.equal(edited.statusCode, 200, edited.body);
      assert.equal(edited.json().version, 2);

      const stale = await viaFirst.request({ method: 'POST', url: `/api/v1/records/${id}/assign`, headers: { 'if-match': '"1"' }, payload: { assignee: 'Bob' } });
      assert.equal(stale.statusCode, 412, stale.body);
      const current = await viaFirst.request({ method: 'POST', url: `/api/v1/records/${id}/assign`, headers: { 'if-match': '"2"' }, payload: { assignee: 'Bob' } });
      assert.equal(current.statusCode, 200, current.body);
      assert.deepEqual([current.json().priority, current.json().version], ['HIGH', 3], 'decided from the row as edited by the other process');
    });

    it('puts the whole history in the proof of a completion by a process that remembers nothing', async () => {
      const id = await create();
      for (const [url, payload] of [
        [`/api/v1/records/${id}`, { priority: 'HIGH' }],
        [`/api/v1/records/${id}/assign`, { assignee: 'Ann' }],
        [`/api/v1/records/${id}/start`, {}],
      ] as const) {
        const response = await viaFirst.request({ method: url.endsWith(id) ? 'PATCH' : 'POST', url, payload });
        assert.equal(response.statusCode, 200, response.body);
      }
      // The second process reads the work order and its history together (one round trip).
      const completed = await viaSecond({ method: 'POST', url: `/api/v1/records/${id}/complete`, payload: { resolutionNotes: 'Fixed.' } });
      assert.equal(completed.statusCode, 200, completed.body);

      const history = (await viaSecond({ method: 'GET', url: `/api/v1/records/${id}/events` })).json().events as Array<Record<string, unknown>>;
      const { rows } = await admin.query<{ statement_json: string }>('SELECT statement_json FROM proof_statements WHERE record_id = $1', [id]);
      assert.equal(rows.length, 1);
      const statement = JSON.parse(rows[0]!.statement_json) as { history: Array<Record<string, unknown>>};
      assert.deepEqual(
        statement.history.map((entry) => [entry.action, entry.from, entry.to, entry.at, entry.data]),
        history.map((entry) => [entry.action, entry.fromStatus, entry.toStatus, entry.occurredAt, entry.data]),
      );
      assert.deepEqual(
        statement.history.map((entry) => entry.action),
        ['created', 'updated', 'assign', 'start', 'complete'],
      );
    });

    it('puts a comment made while a completion was on its way into the completion’s proof', async () => {
      const id = await create({ assignee: 'Ann' });
      const started = await viaFirst.request({ method: 'POST', url: `/api/v1/records/${id}/start`, payload: {} });
      assert.equal(started.statusCode, 200, started.body);

      // Holds the completion's write back after its read: the write inserts a proof statement, and
      // PostgreSQL takes a statement's table locks before the snapshot it runs in.
      const blocker = new pg.Client({ connectionString: database.url });
      await blocker.connect();
      try {
        await blocker.query('BEGIN');
        await blocker.query('LOCK TABLE proof_statements IN SHARE ROW EXCLUSIVE MODE');
        const completing = viaSecond({ method: 'POST', url: `/api/v1/records/${id}/complete`, payload: { resolutionNotes: 'Fixed.' } });
        await waitFor(async () => {
          const { rows } = await admin.query(`SELECT 1 FROM pg_locks WHERE relation = 'proof_statements'::regclass AND NOT granted`);
          return rows.length > 0 ? true : undefined;
        });
        // A comment adds a history entry and leaves the work order's version as it is.
        const commented = await viaFirst.request({ method: 'POST', url: `/api/v1/records/${id}/comments`, payload: { body: 'Parts were on back order.' } });
        assert.equal(commented.statusCode, 201, commented.body);
        await blocker.query('COMMIT');
        const completed = await completing;
        assert.equal(completed.statusCode, 200, completed.body);
      } finally {
        await blocker.end();
      }

      const history = (await viaSecond({ method: 'GET', url: `/api/v1/records/${id}/events` })).json().events as Array<Record<string, unknown>>;
      const { rows } = await admin.query<{ statement_json: string }>('SELECT statement_json FROM proof_statements WHERE record_id = $1', [id]);
      const statement = JSON.parse(rows[0]!.statement_json) as { history: Array<Record<string, unknown>> };
      assert.deepEqual(
        statement.history.map((entry) => entry.action),
        ['created', 'start', 'commented', 'complete'],
      );
      assert.deepEqual(
        statement.history.map((entry) => [entry.action, entry.at, entry.data]),
        history.map((entry) => [entry.action, entry.occurredAt, entry.data]),
      );
    });

    /** The proof statement's history of the work order's one completion: action and data per entry. */
    async function provenHistory(id: string): Promise<Array<[unknown, unknown]>> {
      const { rows } = await admin.query<{ statement_json: string }>('SELECT statement_json FROM proof_statements WHERE record_id = $1', [id]);
      assert.equal(rows.length, 1);
      return (JSON.parse(rows[0]!.statement_json) as { history: Array<Record<string, unknown>> }).history.map((entry) => [entry.action, entry.data]);
    }

    it('completes from the history it remembers with the work order, without reading it again', async () => {
      const id = await create({ assignee: 'Ann' });
      const started = await viaFirst.request({ method: 'POST', url: `/api/v1/records/${id}/start`, payload: {} });
      assert.equal(started.statusCode, 200, started.body);
      // A change no write makes (it adds no entry): only a process that reads the history sees it.
      await admin.query(`UPDATE record_events SET data = '{"assignee":"Changed behind the service"}' WHERE record_id = $1 AND action = 'created'`, [id]);

      const completed = await viaFirst.request({ method: 'POST', url: `/api/v1/records/${id}/complete`, payload: { resolutionNotes: 'Fixed.' } });
      assert.equal(completed.statusCode, 200, completed.body);
      assert.deepEqual(await provenHistory(id), [
        ['created', { assignee: 'Ann' }],
        ['start', {}],
        ['complete', { resolutionNotes: 'Fixed.' }],
      ]);
    });

    it('reads the history again when a comment was added since the one it remembers', async () => {
      const id = await create({ assignee: 'Ann' });
      const started = await viaFirst.request({ method: 'POST', url: `/api/v1/records/${id}/start`, payload: {} });
      assert.equal(started.statusCode, 200, started.body);
      // Through the same process: a comment leaves the version, and the copy, as they are.
      const commented = await viaFirst.request({ method: 'POST', url: `/api/v1/records/${id}/comments`, payload: { body: 'Parts were on back order.' } });
      assert.equal(commented.statusCode, 201, commented.body);

      const completed = await viaFirst.request({ method: 'POST', url: `/api/v1/records/${id}/complete`, payload: { resolutionNotes: 'Fixed.' } });
      assert.equal(completed.statusCode, 200, completed.body);
      const history = (await viaSecond({ method: 'GET', url: `/api/v1/records/${id}/events` })).json().events as Array<Record<string, unknown>>;
      assert.deepEqual(
        await provenHistory(id),
        history.map((entry) => [entry.action, entry.data]),
      );
      assert.deepEqual(history.map((entry) => entry.action), ['created', 'start', 'commented', 'complete']);
    });

    it('never answers a work order of another organization from its memory', async () => {
      const id = await create();
      const other = await first.newTenant();
      const foreign = await other.request({ method: 'POST', url: `/api/v1/records/${id}/assign`, payload: { assignee: 'Mallory' } });
      assert.equal(foreign.statusCode, 404, foreign.body);
      const untouched = await viaSecond({ method: 'GET', url: `/api/v1/records/${id}` });
      assert.deepEqual([untouched.json().status, untouched.json().version], ['OPEN', 1]);
    });
  });
}
