import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import Fastify, { type LightMyRequestResponse } from 'fastify';
import { COMPRESSION_THRESHOLD_BYTES, installCompression } from '../../src/http/compression.js';
import { itOnEachDatabase, recordBody, seedCategory, type Tenant } from '../helpers/test-app.js';

/** Headers that describe the exchange rather than the answer. */
const withoutExchangeHeaders = (response: LightMyRequestResponse) => {
  const { date: _date, 'x-request-id': _id, ratelimit: _budgetLeft, ...rest } = response.headers;
  return rest;
};

async function tenantWithRecords(tenant: Tenant, count: number): Promise<void> {
  const categoryId = await seedCategory(tenant);
  for (let i = 0; i < count; i++) {
    const response = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { description: `Leak number ${i}` }) });
    assert.equal(response.statusCode, 201);
  }
}

describe('response compression', () => {
  itOnEachDatabase('changes nothing for a client that does not ask: same bytes and headers whether Accept-Encoding is absent or identity', async (t) => {
    const tenant = await t.newTenant();
    await tenantWithRecords(tenant, 5);
    const plain = await tenant.request({ method: 'GET', url: '/api/v1/records' });
    assert.ok(plain.rawPayload.length > COMPRESSION_THRESHOLD_BYTES, 'large enough to be compressed if asked');
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.headers.vary, undefined);
    assert.equal(plain.headers['content-length'], String(plain.rawPayload.length));
    const identity = await tenant.request({ method: 'GET', url: '/api/v1/records', headers: { 'accept-encoding': 'identity' } });
    assert.deepEqual(identity.rawPayload, plain.rawPayload);
    assert.deepEqual(withoutExchangeHeaders(identity), withoutExchangeHeaders(plain));
    // A refused encoding is not an encoding asked for.
    const refused = await tenant.request({ method: 'GET', url: '/api/v1/records', headers: { 'accept-encoding': 'gzip;q=0, br;q=0' } });
    assert.deepEqual(refused.rawPayload, plain.rawPayload);
    assert.equal(refused.headers['content-encoding'], undefined);
  });

  itOnEachDatabase('sends gzip or brotli as asked, and the decompressed bytes are exactly the uncompressed answer', async (t) => {
    const tenant = await t.newTenant();
    await tenantWithRecords(tenant, 5);
    const plain = await tenant.request({ method: 'GET', url: '/api/v1/records' });
    const cases: [string, string, (bytes: Buffer) => Buffer][] = [
      ['gzip', 'gzip', gunzipSync],
      ['br', 'br', brotliDecompressSync],
      ['gzip, deflate, br', 'br', brotliDecompressSync],
      ['br;q=0.5, gzip', 'gzip', gunzipSync],
    ];
    for (const [asked, expected, decompress] of cases) {
      const answer = await tenant.request({ method: 'GET', url: '/api/v1/records', headers: { 'accept-encoding': asked } });
      assert.equal(answer.statusCode, 200);
      assert.equal(answer.headers['content-encoding'], expected, asked);
      assert.match(answer.headers.vary as string, /accept-encoding/i);
      assert.ok(answer.rawPayload.length < plain.rawPayload.length / 2, `${asked}: ${answer.rawPayload.length} of ${plain.rawPayload.length} bytes`);
      assert.deepEqual(decompress(answer.rawPayload), plain.rawPayload, asked);
    }
    // The OpenAPI document and the metrics, which tools fetch with Accept-Encoding: gzip.
    for (const url of ['/api/v1/openapi.json', '/metrics']) {
      const answer = await t.app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'gzip' } });
      assert.equal(answer.headers['content-encoding'], 'gzip', url);
      assert.ok(gunzipSync(answer.rawPayload).length > COMPRESSION_THRESHOLD_BYTES, url);
    }
  });

  itOnEachDatabase('leaves answers under 1 KiB uncompressed even when asked, problems included', async (t) => {
    const tenant = await t.newTenant();
    const categoryId = await seedCategory(tenant);
    const created = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId), headers: { 'accept-encoding': 'gzip, br' } });
    assert.equal(created.statusCode, 201);
    assert.ok(created.rawPayload.length < COMPRESSION_THRESHOLD_BYTES);
    assert.equal(created.headers['content-encoding'], undefined);
    assert.equal(created.headers.vary, undefined);
    const problem = await t.app.inject({ method: 'GET', url: '/api/v1/records', headers: { 'accept-encoding': 'gzip' } });
    assert.equal(problem.statusCode, 401);
    assert.equal(problem.headers['content-encoding'], undefined);
    assert.equal(problem.json().code, 'unauthenticated');
  });

  itOnEachDatabase('does not decompress request bodies: a compressed body is still refused with 415', async (t) => {
    const tenant = await t.newTenant();
    const answer = await tenant.request({
      method: 'POST',
      url: '/api/v1/categories',
      payload: gzipSync(JSON.stringify({ name: 'Zipped' })),
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    assert.equal(answer.statusCode, 415);
    assert.equal(answer.json().code, 'unsupported_media_type');
  });

  it('never compresses images, PDF, partial answers or a stored file’s bytes, and compresses text at exactly 1 KiB', async () => {
    const app = Fastify();
    await installCompression(app);
    const big = 'a'.repeat(4096);
    app.get('/image.png', async (_request, reply) => reply.type('image/png').send(Buffer.from(big)));
    app.get('/image.svg', async (_request, reply) => reply.type('image/svg+xml').send(big));
    app.get('/report.pdf', async (_request, reply) => reply.type('application/pdf').send(Buffer.from(big)));
    app.get('/partial', async (_request, reply) => reply.code(206).type('text/plain').header('content-range', `bytes 0-4095/8192`).send(big));
    app.get('/api/v1/records/:id/attachments/:attachmentId/content', async (_request, reply) => reply.type('image/svg+xml').send(big));
    app.get('/text/:size', async (request, reply) => reply.type('text/plain').send('a'.repeat(Number((request.params as { size: string }).size))));
    try {
      for (const url of ['/image.png', '/report.pdf', '/partial', '/api/v1/records/rec_1/attachments/file_1/content']) {
        const answer = await app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'gzip, br' } });
        assert.equal(answer.headers['content-encoding'], undefined, url);
        assert.equal(answer.body, big, url);
      }
      // SVG is text: compressed like any other, except as an attachment's stored bytes (above).
      assert.equal((await app.inject({ method: 'GET', url: '/image.svg', headers: { 'accept-encoding': 'gzip' } })).headers['content-encoding'], 'gzip');
      const under = await app.inject({ method: 'GET', url: `/text/${COMPRESSION_THRESHOLD_BYTES - 1}`, headers: { 'accept-encoding': 'gzip' } });
      assert.equal(under.headers['content-encoding'], undefined);
      const at = await app.inject({ method: 'GET', url: `/text/${COMPRESSION_THRESHOLD_BYTES}`, headers: { 'accept-encoding': 'gzip' } });
      assert.equal(at.headers['content-encoding'], 'gzip');
    } finally {
      await app.close();
    }
  });

  itOnEachDatabase('stores an idempotent answer before it is compressed: a replay asked plainly gets the plain bytes', async (t) => {
    const tenant = await t.newTenant();
    const categoryId = await seedCategory(tenant);
    // A preview is not answered inside a transaction, so its answer is stored as it is sent (onSend).
    const body = { name: 'Weekly', template: { categoryId, description: 'Check the boiler room' }, triggers: [{ type: 'calendar', rrule: 'FREQ=WEEKLY', start: '2030-01-07T09:00:00', timezone: 'Europe/Paris' }], leadTime: 'P1D' };
    const send = (headers: Record<string, string>) =>
      tenant.request({ method: 'POST', url: '/api/v1/schedules/preview', payload: body, headers: { 'idempotency-key': 'preview-compressed', ...headers } });
    const first = await send({ 'accept-encoding': 'gzip' });
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.headers['content-encoding'], 'gzip', 'large enough to be compressed');
    const plain = gunzipSync(first.rawPayload);
    const replay = await send({});
    assert.equal(replay.headers['x-idempotent-replay'], 'true');
    assert.equal(replay.headers['content-encoding'], undefined);
    assert.deepEqual(replay.rawPayload, plain);
    const compressedReplay = await send({ 'accept-encoding': 'gzip' });
    assert.equal(compressedReplay.headers['x-idempotent-replay'], 'true');
    assert.deepEqual(gunzipSync(compressedReplay.rawPayload), plain);
  });
});
