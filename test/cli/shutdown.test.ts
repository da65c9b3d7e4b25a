import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import { startChildService, type ChildService } from '../helpers/child-service.js';
import { freePort } from '../helpers/free-port.js';
import { waitFor } from '../helpers/test-app.js';

const DRAIN_MS = 3000;

/** A TCP connection to the service that sends nothing. */
async function openConnection(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  return socket;
}

/** Sends SIGTERM and checks the drain: /readyz 503 at once, other requests still served, then exit 0. */
async function checkDrain(service: ChildService, servedDuringDrain: string[], duringDrain: () => Promise<void> = async () => undefined): Promise<void> {
  const signalledAt = Date.now();
  service.child.kill('SIGTERM');
  const readiness = await waitFor(async () => {
    const response = await fetch(`${service.base}/readyz`);
    return response.status === 503 && response;
  }, 1000, '/readyz to answer 503 right after SIGTERM');
  assert.match(String(readiness.headers.get('content-type')), /^application\/problem\+json/);
  assert.equal((await readiness.json()).code, 'unavailable');
  assert.ok(readiness.headers.get('retry-after'));
  for (const url of servedDuringDrain) {
    const response = await fetch(`${service.base}${url}`);
    assert.equal(response.status, 200, `${url} is still served during the drain`);
    assert.equal(response.headers.get('connection'), 'close', 'clients are told to reconnect elsewhere');
    await response.arrayBuffer();
  }
  await duringDrain();
  assert.ok(Date.now() - signalledAt < DRAIN_MS, 'the checks above ran within the drain');
  // Well before the hard stop (25 s after the drain), which would exit 1.
  assert.equal(await waitFor(() => service.exited, DRAIN_MS + 10_000, 'the process to exit'), 0);
  assert.ok(Date.now() - signalledAt >= DRAIN_MS, 'it served for the whole drain before closing');
  await assert.rejects(fetch(`${service.base}/healthz`), 'nothing listens any more');
  assert.match(service.logs(), /"msg":"shut down"/);
}

describe('`wo worker` health and graceful shutdown, as real processes', () => {
  const dataDirs: string[] = [];
  const services: ChildService[] = [];
  const newDataDir = () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wo-shutdown-'));
    dataDirs.push(dir);
    return dir;
  };
  after(async () => {
    await Promise.all(services.map((service) => service.kill()));
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  it('serves /healthz, /readyz and /metrics (deliveries, sequencer) on WO_WORKER_PORT, and drains on SIGTERM before exiting 0', async () => {
    const port = await freePort();
    const worker = await startChildService(['worker'], { WO_DATA_DIR: newDataDir(), DATABASE_URL: '', WO_WORKER_PORT: String(port), WO_SHUTDOWN_DRAIN_MS: String(DRAIN_MS) }, port);
    services.push(worker);
    assert.deepEqual(await (await fetch(`${worker.base}/healthz`)).json(), { status: 'ok' });
    assert.deepEqual(await (await fetch(`${worker.base}/readyz`)).json(), { status: 'ready', database: 'sqlite' });
    const metrics = await (await fetch(`${worker.base}/metrics`)).text();
    for (const name of ['wo_webhook_in_flight', 'wo_webhook_attempts_total', 'wo_proof_seals_total', 'wo_proof_sequencer_failures_total', 'process_resident_memory_bytes']) {
      assert.match(metrics, new RegExp(`^# TYPE ${name} `, 'm'), name);
    }
    const unknown = await fetch(`${worker.base}/api/v1/records`);
    assert.equal(unknown.status, 404);
    assert.equal((await unknown.json()).code, 'route_not_found');
    await checkDrain(worker, ['/healthz', '/metrics']);
  });

  it('serves no HTTP at all with WO_WORKER_PORT=0, and still stops on SIGTERM with exit 0', async () => {
    const worker = await startChildService(['worker'], { WO_DATA_DIR: newDataDir(), DATABASE_URL: '', WO_WORKER_PORT: '0', WO_SHUTDOWN_DRAIN_MS: '60000' });
    services.push(worker);
    const running = JSON.parse(worker.logs().split('\n').find((line) => line.includes('"msg":"work-order service running"'))!);
    assert.equal(running.address, undefined, 'it listens nowhere');
    assert.doesNotMatch(worker.logs(), /Server listening/);
    const signalledAt = Date.now();
    worker.child.kill('SIGTERM');
    assert.equal(await waitFor(() => worker.exited, 20_000, 'the worker to exit'), 0);
    // With nothing served there is nothing to drain: the minute asked for is not waited.
    assert.ok(Date.now() - signalledAt < 15_000, `stopped in ${Date.now() - signalledAt} ms, without waiting for a drain`);
    assert.doesNotMatch(worker.logs(), /still serving during the drain/);
  });

  it('`wo serve` drains on SIGTERM: /readyz 503 at once, API requests served until the drain ends, then exit 0', async () => {
    const port = await freePort();
    const api = await startChildService(['serve'], { WO_DATA_DIR: newDataDir(), DATABASE_URL: '', PORT: String(port), WO_SHUTDOWN_DRAIN_MS: String(DRAIN_MS) }, port);
    services.push(api);
    assert.equal((await fetch(`${api.base}/readyz`)).status, 200);
    // Connections that never send a byte (a load balancer's pre-opened ones, TCP health checks), opened
    // before the signal and during the drain, do not hold the process open past it.
    // Held open here until the process exits: checkDrain's exit 0 well within the hard stop is the proof.
    const unused = [await openConnection(port)];
    await checkDrain(api, ['/api/v1/openapi.json', '/.well-known/jwks.json'], async () => {
      unused.push(await openConnection(port));
    });
    for (const socket of unused) socket.destroy();
  });
});
