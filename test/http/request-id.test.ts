import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { itOnEachDatabase, recordBody, seedCategory, waitFor } from '../helpers/test-app.js';
import { buildWorkerApp } from '../../src/worker-app.js';

const GENERATED = /^req_[0-9A-Z]{26}$/;

interface LogLine {
  msg: string;
  requestId?: string;
  req?: { method: string; url: string };
  res?: { statusCode: number };
}

/** The service's logger at `info`, writing into `lines`. */
function capturingLogger(lines: LogLine[]) {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  return pino({ level: 'info' }, sink);
}

describe('request ids', () => {
  itOnEachDatabase('echoes a client’s sane X-Request-Id on success and on a problem, in the header and in the body', async (t) => {
    const tenant = await t.newTenant();
    const categoryId = await seedCategory(tenant);
    for (const id of ['a', 'client-req.42:retry_1', 'x'.repeat(128), '0f8fad5b-d9cb-469f-a165-70867728950e']) {
      const created = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId), headers: { 'x-request-id': id } });
      assert.equal(created.statusCode, 201);
      assert.equal(created.headers['x-request-id'], id);
      const refused = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: {}, headers: { 'x-request-id': id } });
      assert.equal(refused.statusCode, 400);
      assert.equal(refused.headers['x-request-id'], id);
      assert.equal(refused.json().requestId, id);
    }
  });

  itOnEachDatabase('names the current request on an idempotent replay, not the one whose answer is replayed', async (t) => {
    const tenant = await t.newTenant();
    const categoryId = await seedCategory(tenant);
    const send = (requestId: string) =>
      tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId), headers: { 'idempotency-key': 'request-id-replay', 'x-request-id': requestId } });
    const first = await send('first-attempt');
    const replay = await send('second-attempt');
    assert.equal(replay.headers['x-idempotent-replay'], 'true');
    assert.equal(replay.body, first.body);
    assert.deepEqual([first.headers['x-request-id'], replay.headers['x-request-id']], ['first-attempt', 'second-attempt']);
  });

  itOnEachDatabase('generates a new id for a request without one, different for every request', async (t) => {
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const response = await t.app.inject({ method: 'GET', url: '/healthz' });
      assert.equal(response.statusCode, 200);
      assert.match(response.headers['x-request-id'] as string, GENERATED);
      ids.add(response.headers['x-request-id'] as string);
    }
    assert.equal(ids.size, 5);
  });

  itOnEachDatabase('replaces an id that is empty, too long or carries other characters with a new one', async (t) => {
    for (const id of ['', 'x'.repeat(129), 'has space', 'semi;colon', 'quote"d', 'slash/ed', 'ünïcode', 'a,b']) {
      const response = await t.app.inject({ method: 'GET', url: '/api/v1/records', headers: { 'x-request-id': id } });
      assert.equal(response.statusCode, 401);
      assert.match(response.headers['x-request-id'] as string, GENERATED, JSON.stringify(id));
      assert.equal(response.json().requestId, response.headers['x-request-id']);
    }
  });

  itOnEachDatabase('puts the id in every problem body: authentication, validation, a bad URL, 404, 405, an unsupported body and a conflict', async (t) => {
    const tenant = await t.newTenant();
    const answers = [
      await t.app.inject({ method: 'GET', url: '/api/v1/records' }),
      await tenant.request({ method: 'GET', url: '/api/v1/records?limit=0' }),
      await tenant.request({ method: 'GET', url: '/api/v1/records/%zz' }),
      await tenant.request({ method: 'GET', url: '/api/v1/records/rec_01JD3Q4W8Y6V3C0M2ZP4K7N9XA' }),
      await t.app.inject({ method: 'GET', url: '/no/such/route' }),
      await tenant.request({ method: 'DELETE', url: '/api/v1/records' }),
      await tenant.request({ method: 'POST', url: '/api/v1/records', payload: 'x=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      await tenant.request({ method: 'POST', url: '/api/v1/records', payload: '{"oops', headers: { 'content-type': 'application/json' } }),
    ];
    assert.deepEqual(answers.map((r) => r.statusCode), [401, 400, 400, 404, 404, 405, 415, 400]);
    for (const answer of answers) {
      assert.match(answer.headers['content-type'] as string, /^application\/problem\+json/);
      assert.match(answer.json().requestId, GENERATED);
      assert.equal(answer.json().requestId, answer.headers['x-request-id']);
    }
  });

  itOnEachDatabase('names requests to the worker’s port as the API does: a client’s sane id echoed, else a new req_ id, in the header and a problem', async (t) => {
    const worker = await buildWorkerApp(t.context);
    try {
      const generated = await worker.inject({ method: 'GET', url: '/healthz' });
      assert.equal(generated.statusCode, 200);
      assert.match(generated.headers['x-request-id'] as string, GENERATED);
      const echoed = await worker.inject({ method: 'GET', url: '/readyz', headers: { 'x-request-id': 'probe-7' } });
      assert.equal(echoed.headers['x-request-id'], 'probe-7');
      const missing = await worker.inject({ method: 'GET', url: '/no/such/route' });
      assert.equal(missing.statusCode, 404);
      assert.match(missing.json().requestId, GENERATED);
      assert.equal(missing.json().requestId, missing.headers['x-request-id']);
    } finally {
      await worker.close();
    }
  });

  const lines: LogLine[] = [];
  itOnEachDatabase(
    'writes the id into the access-log line of the request',
    async (t) => {
      lines.length = 0;
      // Not a probe: /healthz, /readyz and /metrics are logged at debug, below this logger's level.
      const echoed = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json', headers: { 'x-request-id': 'trace-me-123' } });
      const generated = await t.app.inject({ method: 'GET', url: '/api/v1/records' });
      for (const response of [echoed, generated]) {
        const id = response.headers['x-request-id'] as string;
        const line = await waitFor(() => lines.find((entry) => entry.msg === 'request completed' && entry.requestId === id), 5_000, `the access line of ${id}`);
        assert.equal(line.res?.statusCode, response.statusCode);
      }
      assert.equal(echoed.headers['x-request-id'], 'trace-me-123');
    },
    { logger: capturingLogger(lines) },
  );
});
