// What Node's HTTP parser refuses never reaches a route, yet the client still gets the same
// problem+json as for every other error: oversized headers, malformed HTTP, a missing Host.
// These need a real socket: app.inject builds well-formed requests only.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { sampleFiles } from '../helpers/files.js';
import { createWorkOrder, startTestApp, waitFor, type TestApp } from '../helpers/test-app.js';

/** Sends `raw` bytes and reads until the server closes the connection (or `deadlineMs` passes). */
function exchange(port: number, raw: string, deadlineMs = 5_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1', () => socket.write(raw));
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close within ${deadlineMs} ms; got: ${Buffer.concat(chunks).toString().slice(0, 300)}`));
    }, deadlineMs);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => {}); // the server may reset after answering; what it sent is checked below
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString());
    });
  });
}

function problemOf(answer: string): { status: number; contentType: string; requestId: string; body: Record<string, unknown> } {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
  const contentType = /\r\ncontent-type: ([^\r\n]*)/i.exec(head)?.[1] ?? '';
  const requestId = /\r\nx-request-id: ([^\r\n]*)/i.exec(head)?.[1] ?? '';
  return { status, contentType, requestId, body: JSON.parse(body) as Record<string, unknown> };
}

describe('requests the HTTP parser refuses', () => {
  let testApp: TestApp;
  let port: number;

  before(async () => {
    testApp = await startTestApp('sqlite');
    await testApp.app.listen({ port: 0, host: '127.0.0.1' });
    port = (testApp.app.server.address() as { port: number }).port;
  });
  after(() => testApp.close());

  const cases: [string, string, number, string][] = [
    ['headers over 16 KiB', `GET /api/v1/records HTTP/1.1\r\nHost: x\r\nX-Long: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'headers_too_large'],
    ['a query string over 16 KiB', `GET /api/v1/records?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 431, 'headers_too_large'],
    ['a garbage request line', 'HELLO THERE\r\n\r\n', 400, 'malformed_request'],
    ['a control character in a header', 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0001b\r\n\r\n', 400, 'malformed_request'],
    ['both Content-Length and Transfer-Encoding', 'POST /api/v1/records HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 400, 'malformed_request'],
    ['a Content-Length that is not a number', 'POST /api/v1/records HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', 400, 'malformed_request'],
    ['a broken chunk', 'POST /api/v1/records HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n', 400, 'malformed_request'],
    ['no Host header', 'GET /api/v1/records HTTP/1.1\r\n\r\n', 400, 'malformed_request'],
  ];
  for (const [label, raw, status, code] of cases) {
    it(`answers ${label} with ${status} ${code} as problem+json, with a request id`, async () => {
      const problem = problemOf(await exchange(port, raw));
      assert.equal(problem.status, status);
      assert.match(problem.requestId, /^req_[0-9A-Z]{26}$/);
      assert.equal(problem.body.requestId, problem.requestId);
      assert.match(problem.contentType, /^application\/problem\+json/);
      assert.equal(problem.body.code, code);
      assert.equal(problem.body.type, `urn:wo:problem:${code}`);
      assert.equal(problem.body.status, status);
      assert.ok(typeof problem.body.detail === 'string' && problem.body.detail.length > 0);
      assert.equal(problem.body.documentationUrl, `${testApp.config.publicUrl}/docs/errors#${code}`);
    });
  }

  it('never sends a problem that would be read as the answer to an earlier, pipelined request', async () => {
    // The first request is complete and still being answered when the parser meets the second.
    const answer = await exchange(port, 'GET /api/v1/records HTTP/1.1\r\nHost: x\r\n\r\nHELLO THERE\r\n\r\n');
    assert.doesNotMatch(answer, /malformed_request/);
    if (answer) assert.match(answer, /^HTTP\/1\.1 401 /, 'whatever arrives is the first request\'s own answer');
  });

  it('still answers a create that arrived whole before a malformed request, then closes', async () => {
    const key = (await testApp.newTenant()).key;
    const body = '{"name":"before the garbage"}';
    const answer = await exchange(port, `POST /api/v1/categories HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}GARBAGE\r\n\r\n`);
    assert.match(answer, /^HTTP\/1\.1 201 /, answer.slice(0, 300));
    assert.match(answer, /\r\nconnection: close\r\n/i);
    assert.doesNotMatch(answer, /malformed_request/);
  });

  it('answers an Expect other than 100-continue with 417 expectation_failed as problem+json, then closes', async () => {
    const answer = await exchange(port, 'POST /api/v1/records HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}');
    const problem = problemOf(answer);
    assert.equal(problem.status, 417);
    assert.match(problem.contentType, /^application\/problem\+json/);
    assert.equal(problem.body.code, 'expectation_failed');
    assert.equal(problem.body.type, 'urn:wo:problem:expectation_failed');
    assert.equal(problem.body.instance, '/api/v1/records');
    assert.equal(problem.body.documentationUrl, `${testApp.config.publicUrl}/docs/errors#expectation_failed`);
    assert.match(String(problem.body.detail), /"200-ok"/);
    assert.match(problem.requestId, /^req_[0-9A-Z]{26}$/);
    assert.equal(problem.body.requestId, problem.requestId);
    assert.match(answer, /\r\nconnection: close\r\n/i);
  });

  it('still honours Expect: 100-continue', async () => {
    const answer = await exchange(port, 'POST /api/v1/records HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}');
    assert.match(answer, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 401 /);
  });

  it('answers CONNECT with 405 method_not_allowed as problem+json, then closes', async () => {
    const answer = await exchange(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    const problem = problemOf(answer);
    assert.equal(problem.status, 405);
    assert.match(answer, /\r\nAllow: \r\n/, 'an empty Allow: no method is allowed on a host');
    assert.equal(problem.body.code, 'method_not_allowed');
    assert.equal(problem.body.documentationUrl, `${testApp.config.publicUrl}/docs/errors#method_not_allowed`);
    assert.match(problem.contentType, /^application\/problem\+json/);
  });

  it('refuses Authorization, Content-Type or Idempotency-Key sent twice with 400, whichever copy is valid', async () => {
    const key = (await testApp.newTenant()).key;
    const body = '{"name":"twice"}';
    const twice = [
      `Authorization: Bearer ${key}\r\nAuthorization: Bearer wo_other\r\nContent-Type: application/json`,
      `Authorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Type: text/plain`,
      `Authorization: Bearer ${key}\r\nContent-Type: application/json\r\nIdempotency-Key: a\r\nIdempotency-Key: b`,
    ];
    for (const headers of twice) {
      const answer = await exchange(port, `POST /api/v1/categories HTTP/1.1\r\nHost: x\r\n${headers}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
      const problem = problemOf(answer);
      assert.equal(problem.status, 400, answer);
      assert.equal(problem.body.code, 'validation_failed');
    }
    const listed = await testApp.app.inject({ method: 'GET', url: '/api/v1/categories', headers: { authorization: `Bearer ${key}` } });
    assert.equal(listed.json().total, 0, 'nothing was created');
  });

  it('still serves a well-formed request on a new connection afterwards', async () => {
    const answer = await exchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 200 /);
  });
});

describe('a request whose body stops arriving', () => {
  let testApp: TestApp;
  let port: number;
  let key: string;

  before(async () => {
    testApp = await startTestApp('sqlite', { env: { WO_BODY_IDLE_TIMEOUT_MS: '1000' } });
    await testApp.app.listen({ port: 0, host: '127.0.0.1' });
    port = (testApp.app.server.address() as { port: number }).port;
    key = (await testApp.newTenant()).key;
  });
  after(() => testApp.close());

  it('is answered 408 request_timeout as problem+json once no byte arrived for WO_BODY_IDLE_TIMEOUT_MS, and closed', async () => {
    const started = Date.now();
    const answer = await exchange(port, `POST /api/v1/categories HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"na`, 10_000);
    const problem = problemOf(answer);
    assert.equal(problem.status, 408, answer);
    assert.equal(problem.body.code, 'request_timeout');
    assert.equal(problem.body.documentationUrl, `${testApp.config.publicUrl}/docs/errors#request_timeout`);
    assert.match(problem.contentType, /^application\/problem\+json/);
    assert.ok(Date.now() - started >= 900, 'not before the timeout');
    const categories = await testApp.app.inject({ method: 'GET', url: '/api/v1/categories', headers: { authorization: `Bearer ${key}` } });
    assert.equal(categories.json().total, 0, 'nothing was created');
  });

  it('leaves alone a request that arrived whole and takes longer than the timeout to answer', async () => {
    // A long-poll of the event feed for 2 s, twice the idle timeout, on a connection silent meanwhile.
    const answer = await exchange(port, `GET /api/v1/events?wait=2 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`, 10_000);
    assert.match(answer, /^HTTP\/1\.1 200 /, answer.slice(0, 300));
  });

  it('answers 408 to a request whose headers stop arriving part-way', async () => {
    const started = Date.now();
    const answer = await exchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nAccept: appl', 10_000);
    const problem = problemOf(answer);
    assert.equal(problem.status, 408, answer);
    assert.equal(problem.body.code, 'request_timeout');
    assert.ok(Date.now() - started >= 900, 'not before the timeout');
  });

  it('closes a connection that sends nothing for the timeout, as Node does', async () => {
    const started = Date.now();
    assert.equal(await exchange(port, '', 10_000), '');
    assert.ok(Date.now() - started >= 900, 'not before the timeout');
  });

  it('closes a download whose client stopped reading once no byte moved for the timeout', async () => {
    const tenant = await testApp.newTenant();
    const recordId = await createWorkOrder(tenant);
    // Larger than what loopback's socket buffers hold, so a client that stops reading stalls the answer.
    const size = 24 * 1024 * 1024;
    const uploaded = await tenant.request({ method: 'POST', url: `/api/v1/records/${recordId}/attachments?filename=large.png`, headers: { 'content-type': 'image/png' }, payload: sampleFiles.png(size) });
    assert.equal(uploaded.statusCode, 201, uploaded.body);
    const started = Date.now();
    const socket = connect(port, '127.0.0.1', () => socket.write(`GET /api/v1/records/${recordId}/attachments/${uploaded.json().id}/content HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tenant.key}\r\n\r\n`));
    socket.on('error', () => {});
    const closed = new Promise((resolve) => socket.on('close', resolve));
    // The client stops reading after its first bytes.
    const first = await new Promise<Buffer>((resolve) => socket.once('data', (chunk: Buffer) => (socket.pause(), resolve(chunk))));
    let received = first.length;
    const openConnections = () => new Promise<number>((resolve) => testApp.app.server.getConnections((_error, count) => resolve(count)));
    await waitFor(async () => (await openConnections()) === 0, 10_000, 'the server to close the stalled download');
    // Reading again drains what was in flight, then the connection ends short of the whole file.
    socket.on('data', (chunk: Buffer) => (received += chunk.length)).resume();
    await closed;
    assert.ok(Date.now() - started >= 900, 'not before the timeout');
    assert.ok(received < size, `the answer was cut off (${received} of ${size} bytes)`);
  });

  it('leaves an idle keep-alive connection to keepAliveTimeout, serving its next request', async () => {
    const answers = await new Promise<string>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const socket = connect(port, '127.0.0.1', () => socket.write(`GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n`));
      socket.on('data', (chunk) => chunks.push(chunk));
      socket.on('error', reject);
      // Silent for 1.5 timeouts, then a second request on the same connection.
      setTimeout(() => socket.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`), 1_500);
      socket.on('close', () => resolve(Buffer.concat(chunks).toString()));
    });
    assert.equal(answers.match(/HTTP\/1\.1 200 /g)?.length, 2, answers);
  });
});
