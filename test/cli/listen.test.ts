import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { verifyWebhookSignature } from '../../src/webhooks/signature.js';
import { startChildService, type ChildService } from '../helpers/child-service.js';
import { freePort } from '../helpers/free-port.js';
import { waitFor } from '../helpers/test-app.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const run = promisify(execFile);
const MAIN = path.resolve('src/main.ts');

/** `wo listen` as an integrator runs it: a process of its own, talking to the service over HTTP. */
interface Listener {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | string>;
}

function startListener(args: string[], env: Record<string, string>): Listener {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'listen', ...args], {
    env: { ...process.env, WO_API_KEY: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk) => (out += chunk));
  child.stderr!.on('data', (chunk) => (err += chunk));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  return { child, stdout: () => out, stderr: () => err, exited };
}

describe('wo listen', () => {
  let dataDir: string;
  let service: ChildService;
  let key: string;
  let categoryId: string;
  const listeners: Listener[] = [];
  const receivers: WebhookReceiver[] = [];

  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'wo-listen-'));
    const port = await freePort();
    const env = { WO_DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'warn' };
    // The service keeps its URL guard on: wo listen needs no private-URL setting.
    service = await startChildService(['serve'], { ...env, LOG_LEVEL: 'info', PORT: String(port), WO_SHUTDOWN_DRAIN_MS: '0', WO_WEBHOOK_ALLOW_PRIVATE_URLS: 'false' }, port);
    const cli = async (args: string[]) => (await run(process.execPath, ['--import', 'tsx', MAIN, ...args], { env: { ...process.env, ...env } })).stdout;
    await cli(['orgs', 'create', 'Acme', '--json']);
    key = JSON.parse(await cli(['keys', 'create', '--org', 'Acme', '--scopes', 'events:read,records:write,categories:write', '--json'])).key;
    categoryId = (await call('POST', '/api/v1/categories', { name: 'Plumbing' })).id;
  });

  after(async () => {
    for (const listener of listeners) listener.child.kill('SIGKILL');
    for (const receiver of receivers) await receiver.close();
    await service?.kill();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function call(method: string, url: string, body: unknown): Promise<{ id: string }> {
    const response = await fetch(`${service.base}${url}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.equal(response.status, 201, await response.clone().text());
    return (await response.json()) as { id: string };
  }

  const createRecord = (description: string) => call('POST', '/api/v1/records', { categoryId, address: '12 Harbour Road', requesterName: 'Ann', description });

  async function listen(args: string[], receiver: WebhookReceiver): Promise<{ listener: Listener; secret: string }> {
    const listener = startListener(['--forward-to', receiver.url, '--api-url', service.base, ...args], { WO_API_KEY: key });
    listeners.push(listener);
    const secret = await waitFor(() => /Signing secret: (whsec_\S+)/.exec(listener.stdout())?.[1], 30_000, `wo listen to start:\n${listener.stderr()}`);
    await waitFor(() => listener.stdout().includes('Waiting for new events'), 10_000, 'wo listen to wait');
    return { listener, secret };
  }

  it('forwards a new work order to a loopback receiver, signed with the printed secret as a delivery is, printing one line for it; Ctrl-C stops it at once', async () => {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const before = await createRecord('before wo listen started');
    const { listener, secret } = await listen(['--events', 'record.created'], receiver);
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/, 'the format subscriptions use');

    const created = await createRecord('Kitchen tap leaks');
    const [delivery] = await waitFor(() => (receiver.received.length > 0 ? receiver.received : undefined), 15_000, 'the receiver to get the work order');
    assert.equal(receiver.received.length, 1, '--from now: the work order created before the start is not sent');
    assert.notEqual((delivery!.json.payload as { recordId: string }).recordId, before.id);

    // Verified as a receiver verifies a real delivery: Standard Webhooks, and X-Webhook-Signature.
    const headers = delivery!.headers as Record<string, string>;
    const verified = new Webhook(secret).verify(delivery!.body, headers) as { event: string; payload: { recordId: string; sequence: number }; timestamp: string };
    assert.equal(verified.event, 'record.created');
    assert.equal(verified.payload.recordId, created.id);
    assert.ok(Number.isInteger(verified.payload.sequence), 'sequence in the payload, as in a delivery');
    assert.deepEqual(Object.keys(verified), ['event', 'payload', 'timestamp']);
    assert.ok(verifyWebhookSignature(secret, delivery!.body, headers['x-webhook-signature']));
    assert.equal(headers['x-webhook-event'], 'record.created');
    assert.match(headers['x-webhook-id']!, /^evt_/);
    assert.equal(headers['webhook-id'], headers['x-webhook-id']);
    assert.equal(headers['content-type'], 'application/json');

    // It is the feed's event, with the feed's id and payload.
    const feed = (await (await fetch(`${service.base}/api/v1/events?type=record.created`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
      events: { id: string; payload: unknown }[];
    };
    const event = feed.events.find((e) => e.id === headers['x-webhook-id']);
    assert.deepEqual(event?.payload, verified.payload);

    await waitFor(() => new RegExp(`→ record\\.created ${headers['x-webhook-id']} 200 \\d+ ms`).test(listener.stdout()), 5_000, 'the line for the event');

    const stopped = Date.now();
    listener.child.kill('SIGINT');
    assert.equal(await listener.exited, 130);
    assert.ok(Date.now() - stopped < 3_000, `stopped in ${Date.now() - stopped} ms`);
  });

  it('waits for a service that is not reachable yet, saying once where it reads, instead of failing', async () => {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const listener = startListener(['--forward-to', receiver.url, '--api-url', nowhere], { WO_API_KEY: key });
    listeners.push(listener);
    await waitFor(() => listener.stderr().includes('cannot read the event feed'), 15_000, `the message:\n${listener.stderr()}`);
    assert.match(listener.stderr(), new RegExp(`at ${nowhere.replaceAll('.', '\\.')} \\(ECONNREFUSED\\); trying again\\. Is the service running there\\? Otherwise pass --api-url`));
    assert.doesNotMatch(listener.stderr(), /TypeError|at async/, 'no stack trace');
    assert.equal(listener.child.exitCode, null, 'still running');
    listener.child.kill('SIGINT');
    assert.equal(await listener.exited, 130);
    assert.equal(listener.stderr().match(/cannot read the event feed/g)?.length, 1, 'said once');
  });

  it('tries a failed POST again, and after the last failure says so and goes on to the next event', async () => {
    let answered = 0;
    // The first event: 503, 503, 503 (given up); the second: 500 then 200.
    const receiver = await startReceiver(() => (++answered <= 4 ? { status: answered <= 3 ? 503 : 500 } : { status: 200 }));
    receivers.push(receiver);
    const { listener } = await listen(['--events', 'record.created'], receiver);
    const first = await createRecord('first');
    await waitFor(() => listener.stdout().includes('✗ record.created'), 15_000, 'the first event to be given up');
    const second = await createRecord('second');
    await waitFor(() => listener.stdout().includes('→ record.created'), 15_000, 'the second event to be forwarded');
    const ids = receiver.received.map((r) => (r.json.payload as { recordId: string }).recordId);
    assert.deepEqual(ids, [first.id, first.id, first.id, second.id, second.id]);
    // Each attempt signed afresh, as the delivery worker does; the id stays.
    assert.equal(new Set(receiver.received.slice(0, 3).map((r) => r.headers['webhook-id'])).size, 1);
    assert.match(listener.stdout(), /✗ record\.created evt_\S+ 503 \d+ ms \(not forwarded; going on\)/);
    listener.child.kill('SIGINT');
    assert.equal(await listener.exited, 130);
  });

  it('exits with the feed’s reason for unknown event names (2) and for a key without events:read (1)', async () => {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const unknown = startListener(['--forward-to', receiver.url, '--api-url', service.base, '--events', 'record.created,record.exploded'], { WO_API_KEY: key });
    assert.equal(await unknown.exited, 2);
    assert.match(unknown.stderr(), /record\.exploded/);

    const refused = startListener(['--forward-to', receiver.url, '--api-url', service.base, '--api-key', 'wo_not_a_key'], {});
    assert.equal(await refused.exited, 1);
    assert.match(refused.stderr(), /answered 401.*events:read/s);

    const noKey = startListener(['--forward-to', receiver.url, '--api-url', service.base], {});
    assert.equal(await noKey.exited, 2);
    assert.match(noKey.stderr(), /WO_API_KEY/);
    assert.equal(receiver.received.length, 0);
  });
});
