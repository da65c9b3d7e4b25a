import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { pino } from 'pino';
import { AccessLogController } from '../../src/http/access-log.js';
import { waitFor } from '../helpers/test-app.js';

interface LogLine {
  msg: string;
  requestId?: string;
  req?: { method: string; url: string; remoteAddress?: string };
  res?: { statusCode: number };
  responseTime?: number;
}

/**
 * A real server with the service's access-log controller and a route the test holds open, so a
 * client can hang up while the handler runs (the service's own routes answer too fast to catch).
 */
async function serverWithHeldRoute(level = 'info') {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  const app = Fastify({ loggerInstance: pino({ level }, sink), logController: new AccessLogController() });
  const held: Array<() => void> = [];
  let handlerFinished = false;
  app.post('/held', async () => {
    await new Promise<void>((resolve) => held.push(resolve));
    handlerFinished = true;
    return { ok: true };
  });
  app.get('/quick', async () => ({ ok: true }));
  app.get('/intake/status/:token', async () => ({ ok: true }));
  for (const probe of ['/healthz', '/readyz', '/metrics']) app.get(probe, async () => ({ ok: true }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  return { app, port, lines, held, handlerFinished: () => handlerFinished };
}

describe('the access log', () => {
  it('writes one line per answered request, with method, URL, client, status and time, and none on arrival', async () => {
    const server = await serverWithHeldRoute();
    try {
      const response = await fetch(`http://127.0.0.1:${server.port}/quick?x=1`);
      assert.equal(response.status, 200);
      const line = await waitFor(() => server.lines.find((entry) => entry.msg === 'request completed'), 5_000, 'the access line');
      assert.deepEqual([line.req?.method, line.req?.url, line.req?.remoteAddress, line.res?.statusCode], ['GET', '/quick?x=1', '127.0.0.1', 200]);
      assert.ok(line.responseTime! > 0);
      assert.equal(server.lines.filter((entry) => entry.requestId === line.requestId).length, 1, 'one line for the request');
      assert.ok(!server.lines.some((entry) => entry.msg === 'incoming request'));
      assert.ok(!server.lines.some((entry) => entry.msg === 'request aborted by the client'), 'an answered request is not reported as aborted');
    } finally {
      await server.app.close();
    }
  });

  it('keeps a public page’s token out of the line: its prefix stays, the secret goes', async () => {
    const server = await serverWithHeldRoute();
    const token = `wrs_${'A1b2_C3-'.repeat(5)}xyz`;
    try {
      assert.equal((await fetch(`http://127.0.0.1:${server.port}/intake/status/${token}?x=1`)).status, 200);
      const line = await waitFor(() => server.lines.find((entry) => entry.msg === 'request completed'), 5_000, 'the access line');
      assert.deepEqual([line.req?.method, line.req?.url, line.req?.remoteAddress, line.res?.statusCode], ['GET', '/intake/status/wrs_[redacted]?x=1', '127.0.0.1', 200]);
      assert.ok(!JSON.stringify(server.lines).includes(token.slice(4)));
    } finally {
      await server.app.close();
    }
  });

  it('writes the probes /healthz, /readyz and /metrics at debug, not info, so that polling does not drown the log', async () => {
    for (const level of ['info', 'debug']) {
      const server = await serverWithHeldRoute(level);
      try {
        for (const probe of ['/healthz', '/readyz?x=1', '/metrics']) assert.equal((await fetch(`http://127.0.0.1:${server.port}${probe}`)).status, 200);
        await fetch(`http://127.0.0.1:${server.port}/quick`);
        await waitFor(() => server.lines.some((entry) => entry.msg === 'request completed' && entry.req?.url === '/quick'), 5_000, 'the /quick line');
        const probes = server.lines.filter((entry) => entry.req && entry.req.url !== '/quick').map((entry) => [entry.req?.url, (entry as { level?: number }).level]);
        assert.deepEqual(probes, level === 'info' ? [] : [['/healthz', 20], ['/readyz?x=1', 20], ['/metrics', 20]], level);
      } finally {
        await server.app.close();
      }
    }
  });

  it('writes "request aborted by the client" when the client hangs up after sending the whole request, while the handler still runs', async () => {
    const server = await serverWithHeldRoute();
    try {
      await new Promise<void>((resolve, reject) => {
        const socket = connect(server.port, '127.0.0.1', () => {
          socket.write('POST /held HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}');
        });
        socket.on('error', reject);
        socket.on('close', () => resolve());
        // Hang up once the handler holds the request.
        void waitFor(() => server.held.length === 1, 5_000, 'the handler to run').then(() => socket.destroy(), reject);
      });
      const line = await waitFor(() => server.lines.find((entry) => entry.msg === 'request aborted by the client'), 5_000, 'the aborted line');
      assert.deepEqual([line.req?.method, line.req?.url, line.req?.remoteAddress], ['POST', '/held', '127.0.0.1']);
      assert.equal(server.handlerFinished(), false, 'logged when the client left, not when the handler ended');

      // The handler runs to its end; its answer has nowhere to go, and no second line is written.
      server.held[0]!();
      await waitFor(() => server.handlerFinished(), 5_000, 'the handler to finish');
      await fetch(`http://127.0.0.1:${server.port}/quick`);
      await waitFor(() => server.lines.some((entry) => entry.msg === 'request completed' && entry.req?.url === '/quick'), 5_000, 'a later request to be logged');
      assert.equal(server.lines.filter((entry) => entry.requestId === line.requestId).length, 1, 'one line for the abandoned request');
    } finally {
      await server.app.close();
    }
  });
});
