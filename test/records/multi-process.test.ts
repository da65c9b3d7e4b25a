// Issue 22's promise, with real processes: two `wo serve --no-worker` and one `wo worker` on one
// PostgreSQL database take a concurrent burst from both sides, once with every process alive and once
// with an API process and the worker killed (SIGKILL) in the middle of it. Nothing is lost, each
// Idempotency-Key makes exactly one work order, totals stay equal to COUNT(*), and every event reaches
// the receiver. And with two workers whose sequencers are killed in turn while completions are sealed,
// every completion is sealed once in a log without gaps.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { createContext } from '../../src/context.js';
import { RECORD_STATUSES } from '../../src/records/schemas.js';
import { verifyBundle, type Jwks, type ProofBundle } from '../../src/proofs/verify.js';
import { POSTGRES_URL, createPostgresDatabase } from '../helpers/databases.js';
import { killHard, startChildService } from '../helpers/child-services.js';
import { freePort } from '../helpers/free-port.js';
import { waitFor } from '../helpers/test-app.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const KEYS = 150;
const KILL_BURST_KEYS = 300;
const SEALED_COMPLETIONS = 240;

/** Runs `work` over `items` with at most `limit` in flight. */
async function inParallel<T, R>(items: T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!, index);
      }
    }),
  );
  return results;
}

/** The environment every process of one deployment shares: one database, one secret key, one keys directory. */
function deploymentEnv(dataDir: string, databaseUrl: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    WO_DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    DATABASE_URL: databaseUrl,
    WO_SECRET_KEY: randomBytes(32).toString('base64'),
    WO_KEYS_DIR: path.join(dataDir, 'keys'),
    WO_PUBLIC_URL: 'http://127.0.0.1',
    WO_WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WO_WEBHOOK_RETRY_BASE_MS: '50',
    // A delivery leased by a killed worker falls due again after twice this plus a second.
    WO_WEBHOOK_TIMEOUT_MS: '1000',
    WO_WEBHOOK_IDLE_POLL_MS: '20',
    WO_RATE_LIMIT_PER_MINUTE: '0',
    WO_WORKER_PORT: '0',
  };
}

/** An organization with a key, a category and a webhook subscription to `events`, made through the service's own context. */
async function setUpTenant(env: Record<string, string>, receiverUrl: string, events: string[], scopes = ['records:read', 'records:write']): Promise<{ orgId: string; key: string; categoryId: string }> {
  const setup = await createContext(loadConfig(env), { logger: pino({ level: 'silent' }) });
  try {
    const org = await setup.organizations.create('Multi Org');
    const { key } = await setup.apiKeys.create({ orgId: org.id, name: 'burst', scopes, createdBy: 'test' });
    const category = await setup.categories.create(org.id, { name: 'Plumbing' });
    await setup.webhooks.create(org.id, { name: 'erp', url: receiverUrl, events });
    return { orgId: org.id, key, categoryId: category.id };
  } finally {
    await setup.close();
  }
}

interface Answer {
  status: number;
  replay: string | null;
  body: { id: string; code?: string };
}

/**
 * Starts a create whose body is only half sent, so that the request stays open inside the process;
 * resolves to the error once its connection fails (the process died), and rejects if it is answered.
 */
function halfSentCreate(port: string, key: string, body: string, idempotencyKey: string): Promise<Error> {
  return new Promise((resolve, reject) => {
    const request = http.request({
      host: '127.0.0.1',
      port: Number(port),
      method: 'POST',
      path: '/api/v1/records',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'idempotency-key': idempotencyKey },
    });
    request.on('response', (response) => reject(new Error(`answered ${response.statusCode} to half a body`)));
    request.on('error', resolve);
    request.write(body.slice(0, body.length / 2));
  });
}

async function get(port: string, key: string, url: string): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}${url}`, { headers: { authorization: `Bearer ${key}` } });
}

async function post(port: string, key: string, url: string, body: unknown, idempotencyKey?: string): Promise<Answer> {
  const response = await fetch(`http://127.0.0.1:${port}${url}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
    body: JSON.stringify(body),
  });
  return { status: response.status, replay: response.headers.get('x-idempotent-replay'), body: (await response.json()) as Answer['body'] };
}

/** Work orders per status as PostgreSQL counts them, against `total` as each API process answers it. */
async function assertExactTotals(env: Record<string, string>, orgId: string, key: string, apiPorts: string[], expected: number): Promise<void> {
  const check = await createContext(loadConfig(env), { logger: pino({ level: 'silent' }), migrate: false });
  try {
    const rows = await check.database.db.selectFrom('records').select(['status', sql<string>`count(*)`.as('n')]).where('org_id', '=', orgId).groupBy('status').execute();
    const counted = new Map(rows.map((row) => [row.status as string, Number(row.n)]));
    assert.equal([...counted.values()].reduce((a, b) => a + b, 0), expected, 'one work order per key, none lost');
    for (const port of apiPorts) {
      for (const status of [undefined, ...RECORD_STATUSES]) {
        const response = await get(port, key, `/api/v1/records?limit=1${status ? `&status=${status}` : ''}`);
        const { total } = (await response.json()) as { total: number };
        assert.equal(total, status ? (counted.get(status) ?? 0) : expected, `total of ${status ?? 'the whole list'} on API ${port}`);
      }
    }
  } finally {
    await check.close();
  }
}

/** The ids of the organization's events of `types`, as the outbox holds them. */
/** The `application_name` of every session on the deployment's database (pg_stat_activity). */
async function sessionNames(env: Record<string, string>): Promise<Set<string>> {
  const check = await createContext(loadConfig(env), { logger: pino({ level: 'silent' }), migrate: false });
  try {
    const { rows } = await sql<{ name: string }>`SELECT application_name AS name FROM pg_stat_activity WHERE datname = current_database()`.execute(check.database.db);
    return new Set(rows.map((row) => row.name));
  } finally {
    await check.close();
  }
}

async function outboxEventIds(env: Record<string, string>, orgId: string, types: string[]): Promise<string[]> {
  const check = await createContext(loadConfig(env), { logger: pino({ level: 'silent' }), migrate: false });
  try {
    const rows = await check.database.db.selectFrom('outbox_events').select('id').where('org_id', '=', orgId).where('type', 'in', types).execute();
    return rows.map((row) => row.id);
  } finally {
    await check.close();
  }
}

/** One deployment's shared parts, set up before a suite's tests and torn down after them. */
interface SuiteDeployment {
  env: Record<string, string>;
  receiver: WebhookReceiver;
  /** The processes started; every one still running is killed when the suite ends. */
  children: ChildProcess[];
}

/**
 * Registers the suite's hooks: before its tests, a new PostgreSQL database and data directory, the
 * environment its processes share (plus `extraEnv`) and a webhook receiver answering with `answer`;
 * after them, every process killed, the receiver closed, the database dropped.
 */
function deploymentPerSuite(name: string, options: { answer?: WebhookReceiver['answer']; extraEnv?: Record<string, string> } = {}): SuiteDeployment {
  const deployment = { children: [] as ChildProcess[] } as SuiteDeployment;
  let dataDir: string;
  let database: { url: string; drop: () => Promise<void> } | undefined;
  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), `${name}-`));
    database = await createPostgresDatabase(name.replaceAll('-', '_'));
    deployment.receiver = await startReceiver(options.answer);
    deployment.env = { ...deploymentEnv(dataDir, database.url), ...options.extraEnv };
  });
  after(async () => {
    await Promise.all(deployment.children.map((child) => killHard(child)));
    await deployment.receiver?.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return deployment;
}

if (POSTGRES_URL) {
  describe('two API processes and a worker on one PostgreSQL database', () => {
    const deployment = deploymentPerSuite('wo-multi');
    const apiPorts: string[] = [];

    it('keeps one work order per key, exact totals and every event while both take a concurrent burst', async () => {
      const { env, receiver, children } = deployment;
      const { orgId, key, categoryId } = await setUpTenant(env, receiver.url, ['record.created', 'record.status_changed']);
      for (let i = 0; i < 2; i++) {
        const port = String(await freePort());
        apiPorts.push(port);
        children.push(await startChildService(['serve', '--no-worker'], { ...env, PORT: port }, port));
      }
      children.push(await startChildService(['worker'], env));

      // Each key is sent to both API processes at once, as a client retrying through a load balancer would.
      const keys = Array.from({ length: KEYS }, () => randomUUID());
      const pairs = await inParallel(keys, 25, (idempotencyKey, i) => {
        const body = { categoryId, address: `${i} Harbour Road`, requesterName: 'Ann', description: `leak ${i}` };
        return Promise.all(apiPorts.map((port) => post(port, key, '/api/v1/records', body, idempotencyKey)));
      });
      const ids: string[] = [];
      for (const pair of pairs) {
        for (const answer of pair) assert.ok(answer.status === 201 || answer.body.code === 'idempotency_key_in_use', JSON.stringify(answer));
        const created = pair.filter((answer) => answer.status === 201);
        assert.equal(new Set(created.map((answer) => answer.body.id)).size, 1, 'both answers name one work order');
        assert.equal(created.filter((answer) => answer.replay === null).length, 1, 'exactly one did the work');
        ids.push(created[0]!.body.id);
      }

      // Status changes from both processes at once.
      await inParallel(ids, 25, async (id, i) => {
        const port = apiPorts[i % 2]!;
        if (i % 3 === 0) return void (await post(port, key, `/api/v1/records/${id}/cancel`, { reason: 'Duplicate' }));
        assert.equal((await post(port, key, `/api/v1/records/${id}/assign`, { assignee: 'Bob' })).status, 200);
        if (i % 3 === 1) assert.equal((await post(apiPorts[(i + 1) % 2]!, key, `/api/v1/records/${id}/start`, {})).status, 200);
      });

      await assertExactTotals(env, orgId, key, apiPorts, KEYS);
      const events = await outboxEventIds(env, orgId, ['record.created', 'record.status_changed']);
      const changes = ids.reduce((sum, _id, i) => sum + (i % 3 === 1 ? 2 : 1), 0);
      assert.equal(events.length, KEYS + changes, 'a created event per work order and a status change per action');
      const delivered = () => new Set(receiver.received.map((r) => r.headers['x-webhook-id'] as string));
      await waitFor(() => events.every((id) => delivered().has(id)), 60_000, 'every event to be delivered by the worker');
      // Each process's sessions name it and its role, for an operator reading pg_stat_activity.
      const names = await sessionNames(env);
      for (const [i, child] of children.entries()) assert.ok(names.has(`${i < 2 ? 'wo-api' : 'wo-worker'} pid ${child.pid}`), [...names].join(', '));
    });
  });

  describe('an API process and the worker killed with SIGKILL in the middle of a burst on PostgreSQL', () => {
    let workerKilled = false;
    const acknowledged = new Set<string>();
    // Until the kill, every tenth delivery hangs (the worker times it out and tries again), so that the
    // worker dies with deliveries leased and in flight. Only deliveries answered 200 count as received.
    const deployment = deploymentPerSuite('wo-multi-kill', {
      answer: (request, index) => {
        if (!workerKilled && index % 10 === 0) return 'hang';
        acknowledged.add(request.headers['x-webhook-id'] as string);
        return { status: 200 };
      },
    });

    it('loses no accepted work order, makes one per key and delivers every event once the worker is back', async () => {
      const { env, receiver, children } = deployment;
      const { orgId, key, categoryId } = await setUpTenant(env, receiver.url, ['record.created']);
      const ports = [String(await freePort()), String(await freePort())];
      const apis = await Promise.all(ports.map((port) => startChildService(['serve', '--no-worker'], { ...env, PORT: port }, port)));
      const worker = await startChildService(['worker'], env);
      children.push(...apis, worker);
      const [doomedApi, survivingApi] = ports as [string, string];
      let doomedApiDead = false;

      // A client behind a load balancer: a key goes to either process; when the connection fails
      // (the process died with the request in it), the same request and key go to the other one, and
      // a 409 "still in progress" is retried after a pause.
      let inFlightOnDoomedApi = 0;
      const createUntilAnswered = async (idempotencyKey: string, body: unknown, i: number): Promise<Answer[]> => {
        const answers: Answer[] = [];
        let port = i % 2 === 0 && !doomedApiDead ? doomedApi : survivingApi;
        const deadline = Date.now() + 60_000;
        while (Date.now() < deadline) {
          let answer: Answer;
          const onDoomedApi = port === doomedApi;
          if (onDoomedApi) inFlightOnDoomedApi++;
          try {
            answer = await post(port, key, '/api/v1/records', body, idempotencyKey);
          } catch {
            port = survivingApi;
            continue;
          } finally {
            if (onDoomedApi) inFlightOnDoomedApi--;
          }
          answers.push(answer);
          if (answer.status === 201) return answers;
          assert.equal(answer.body.code, 'idempotency_key_in_use', JSON.stringify(answer));
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        throw new Error(`no 201 for key ${idempotencyKey} within 60 s: ${JSON.stringify(answers)}`);
      };

      const keys = Array.from({ length: KILL_BURST_KEYS }, () => randomUUID());
      const bodyOf = (i: number) => ({ categoryId, address: `${i} Quay Street`, requesterName: 'Ann', description: `leak ${i}` });
      // One request is certain to be inside the process when it dies: its body is only half sent, so the
      // process is still reading it. The others race the kill: each may have been answered, committed
      // without its answer reaching the client, or not done at all.
      const halfSent = halfSentCreate(doomedApi, key, JSON.stringify(bodyOf(0)), keys[0]!);
      let answered = 0;
      // The kill comes once a third of the burst is answered, at a moment when requests are open on the
      // process that dies (the callback runs before any of their answers can be read).
      const killing = waitFor(() => answered >= KILL_BURST_KEYS / 3 && inFlightOnDoomedApi >= 5, 60_000, 'a third of the burst answered, requests open on the API process to kill').then(async () => {
        doomedApiDead = true;
        await Promise.all([killHard(apis[0]!), killHard(worker)]);
        workerKilled = true;
      });
      const results = await inParallel(keys.slice(1), 25, async (idempotencyKey, i) => {
        const answers = await createUntilAnswered(idempotencyKey, bodyOf(i + 1), i + 1);
        answered++;
        return answers;
      });
      await killing;
      // Rejects if the dying process had answered half a body instead of losing the connection.
      await halfSent;
      const retried = await createUntilAnswered(keys[0]!, bodyOf(0), 0);
      assert.equal(retried.at(-1)!.replay, null, 'the half-sent request had done nothing: its retry does the work');
      results.unshift(retried);

      // Each key's last answer is its 201 (a replay when the killed process had committed the work).
      const ids = results.map((answers) => answers.at(-1)!.body.id);
      assert.equal(new Set(ids).size, KILL_BURST_KEYS, 'a work order per key, none answered for two keys');
      // Every answered work order is there, and nothing else: retries made no second work order.
      await assertExactTotals(env, orgId, key, [survivingApi], KILL_BURST_KEYS);
      for (const id of ids) {
        assert.equal((await get(survivingApi, key, `/api/v1/records/${id}`)).status, 200, `work order ${id} as answered`);
      }

      // A new worker picks up what the killed one left: undispatched events and deliveries it had leased.
      children.push(await startChildService(['worker'], env));
      const events = await outboxEventIds(env, orgId, ['record.created']);
      assert.equal(events.length, KILL_BURST_KEYS, 'one created event per work order');
      await waitFor(() => events.every((id) => acknowledged.has(id)), 60_000, 'every event to be delivered by the new worker');
    });
  });

  describe('proof sequencers killed with SIGKILL while completions are sealed on PostgreSQL', () => {
    // Seals every 20 ms, so that a kill is likely to land in the middle of one.
    const deployment = deploymentPerSuite('wo-multi-seal', { extraEnv: { WO_PROOF_BATCH_INTERVAL_MS: '20' } });

    it('seals every completion exactly once, in one contiguous log whose proofs all verify', async () => {
      const { env, receiver, children } = deployment;
      const { key, categoryId } = await setUpTenant(env, receiver.url, ['record.proof_delivered'], ['records:read', 'records:write', 'proofs:read']);
      const port = String(await freePort());
      children.push(await startChildService(['serve', '--no-worker'], { ...env, PORT: port }, port));
      // Two workers, each running a sequencer: one seals at a time (an advisory lock), the other waits its turn.
      const workers = [await startChildService(['worker'], env), await startChildService(['worker'], env)];
      children.push(...workers);

      const ids = await inParallel(Array.from({ length: SEALED_COMPLETIONS }, (_, i) => i), 20, async (i) => {
        const created = await post(port, key, '/api/v1/records', { categoryId, address: `${i} Dock Road`, requesterName: 'Ann', description: `leak ${i}` });
        assert.equal(created.status, 201, JSON.stringify(created));
        for (const [action, body] of [['assign', { assignee: 'Bob' }], ['start', {}]] as const) {
          const answer = await post(port, key, `/api/v1/records/${created.body.id}/${action}`, body);
          assert.equal(answer.status, 200, JSON.stringify(answer));
        }
        return created.body.id;
      });

      // The first worker dies a third of the way through the completions; the second, the only
      // sequencer left, two thirds of the way, and a third worker starts in its place.
      let completed = 0;
      const kills = (async () => {
        await waitFor(() => completed >= SEALED_COMPLETIONS / 3, 60_000, 'a third of the completions');
        await killHard(workers[0]!);
        await waitFor(() => completed >= (2 * SEALED_COMPLETIONS) / 3, 60_000, 'two thirds of the completions');
        await killHard(workers[1]!);
        children.push(await startChildService(['worker'], env));
      })();
      await inParallel(ids, 20, async (id) => {
        const answer = await post(port, key, `/api/v1/records/${id}/complete`, { resolutionNotes: 'Replaced the washer.' });
        assert.equal(answer.status, 200, JSON.stringify(answer));
        completed++;
      });
      await kills;

      const announced = () => new Set(receiver.ofEvent('record.proof_delivered').map((r) => r.json.payload.recordId as string));
      await waitFor(() => ids.every((id) => announced().has(id)), 60_000, 'every completion to be sealed and announced');

      const jwks = (await (await fetch(`http://127.0.0.1:${port}/.well-known/jwks.json`)).json()) as Jwks;
      const leaves = await inParallel(ids, 10, async (id) => {
        const response = await get(port, key, `/api/v1/records/${id}/proof`);
        assert.equal(response.status, 200, `the proof of ${id}`);
        const bundle = (await response.json()) as ProofBundle;
        const verdict = await verifyBundle(bundle, jwks);
        assert.ok(verdict.valid && verdict.recordId === id, `the proof of ${id} verifies: ${JSON.stringify(verdict)}`);
        return bundle.leafIndex;
      });
      // One leaf per completion, none sealed twice, no gap left by a seal that died uncommitted.
      assert.deepEqual([...leaves].sort((a, b) => a - b), ids.map((_id, i) => i));
      const announcements = receiver.ofEvent('record.proof_delivered');
      assert.equal(new Set(announcements.map((r) => r.headers['x-webhook-id'])).size, SEALED_COMPLETIONS, 'one record.proof_delivered event per completion');
    });
  });
}
