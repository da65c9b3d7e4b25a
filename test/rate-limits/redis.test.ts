// Rate limits shared through the real Redis on 127.0.0.1:6379, and what happens when it goes away:
// requests are never refused or held because of Redis; each process counts on its own until it is back.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createContext, type AppContext } from '../../src/context.js';
import { waitFor } from '../helpers/test-app.js';
import { freePort } from '../helpers/free-port.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const REDIS_PORT = 6379;
const REDIS_URL = `redis://127.0.0.1:${REDIS_PORT}`;

/** Each test counts under its own key prefix, so that tests never share a bucket. */
const uniquePrefix = () => `wo-test-${randomBytes(5).toString('hex')}`;

const redis = new Redis(REDIS_URL, { lazyConnect: true });
after(async () => {
  await redis.quit();
});

/** A TCP proxy in front of Redis that a test can stop, start again, or freeze (hold every answer). */
class RedisProxy {
  private server: net.Server | undefined;
  private readonly connections = new Set<net.Socket>();
  private readonly upstreams = new Set<net.Socket>();

  private constructor(readonly port: number) {}

  static async start(): Promise<RedisProxy> {
    const proxy = new RedisProxy(await freePort());
    await proxy.listen();
    return proxy;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async listen(): Promise<void> {
    this.server = net.createServer((client) => {
      const upstream = net.connect(REDIS_PORT, '127.0.0.1');
      this.connections.add(client).add(upstream);
      this.upstreams.add(upstream);
      client.pipe(upstream).pipe(client);
      const end = () => {
        client.destroy();
        upstream.destroy();
        this.connections.delete(client);
        this.connections.delete(upstream);
        this.upstreams.delete(upstream);
      };
      client.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
  }

  /** Redis keeps the connection but stops answering (a hung or overloaded Redis). */
  freeze(): void {
    for (const upstream of this.upstreams) upstream.pause();
  }

  /** Redis goes away: the listener closes and every connection is cut. */
  async stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server?.close(() => resolve()));
    for (const socket of this.connections) socket.destroy();
    await closed;
  }
}

interface LoggedLine {
  level: number;
  msg: string;
}

/** The API in this process, limiting through `redisUrl`, with its log lines kept for the test. */
async function startApi(redisUrl: string, perMinute: number) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'wo-rate-'));
  const prefix = uniquePrefix();
  const config = loadConfig({ WO_DATA_DIR: dataDir, REDIS_URL: redisUrl, WO_RATE_LIMIT_PER_MINUTE: String(perMinute), WO_RATE_LIMIT_REDIS_PREFIX: prefix });
  const logs: LoggedLine[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => logs.push(JSON.parse(line) as LoggedLine) });
  const context: AppContext = await createContext(config, { logger });
  const app: FastifyInstance = await buildApp(context);
  await app.ready();
  const org = await context.organizations.create('Rate Org');
  const { apiKey, key } = await context.apiKeys.create({ orgId: org.id, name: 'rate', scopes: ['records:read', 'categories:read', 'categories:write'], createdBy: 'test' });
  const request = (options: { method: 'GET' | 'POST'; url: string; headers?: Record<string, string>; payload?: Record<string, unknown> }) =>
    app.inject({ ...options, headers: { authorization: `Bearer ${key}`, ...options.headers } });
  const list = async () => {
    const startedAt = performance.now();
    const response = await app.inject({ method: 'GET', url: '/api/v1/records', headers: { authorization: `Bearer ${key}` } });
    const ms = performance.now() - startedAt;
    assert.ok(response.headers.ratelimit, `answer ${response.statusCode} ${response.body} should carry RateLimit`);
    return { status: response.statusCode, remaining: remainingOf(response.headers.ratelimit), ms };
  };
  const redisWarnings = () => logs.filter((line) => line.level === 40 && /Redis is unavailable/.test(line.msg));
  return {
    list,
    request,
    redisWarnings,
    logs,
    /** The count Redis holds for the key's bucket (null when Redis has none). */
    sharedCount: async () => redis.get(`${prefix}:api-key:${apiKey.id}`),
    async close() {
      await app.close();
      await context.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

function remainingOf(field: unknown): number {
  const match = /;r=(\d+);/.exec(String(field));
  assert.ok(match, `RateLimit "${String(field)}" should state the requests left`);
  return Number(match[1]);
}

describe('rate limits shared through Redis', () => {
  it('gives two API processes sharing one Redis a single budget per key and per client address', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'wo-rate-shared-'));
    const ports = [await freePort(), await freePort()];
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      WO_DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      REDIS_URL,
      WO_RATE_LIMIT_PER_MINUTE: '60', // buckets of 10
      WO_RATE_LIMIT_REDIS_PREFIX: uniquePrefix(),
    };
    const children: ChildProcess[] = [];
    try {
      const setup = await createContext(loadConfig(env), { logger: pino({ level: 'silent' }) });
      const org = await setup.organizations.create('Shared Org');
      const { key } = await setup.apiKeys.create({ orgId: org.id, name: 'shared', scopes: ['records:read'], createdBy: 'test' });
      await setup.close();

      // One after the other: both use the same SQLite file, which the first one migrates.
      for (const port of ports) {
        const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve', '--no-worker'], { cwd: ROOT, env: { ...env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'inherit'] });
        children.push(child);
        await waitFor(
          async () => {
            if (child.exitCode !== null) throw new Error(`the API process exited with ${child.exitCode}`);
            return fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false);
          },
          60_000,
          `the API process on port ${port} to be ready`,
        );
      }

      const list = (port: number) => fetch(`http://127.0.0.1:${port}/api/v1/records`, { headers: { authorization: `Bearer ${key}` } });
      const remaining: number[] = [];
      for (let i = 0; i < 10; i++) {
        const response = await list(ports[i % 2]!);
        assert.equal(response.status, 200, `request ${i + 1} of the bucket's 10`);
        remaining.push(remainingOf(response.headers.get('ratelimit')));
      }
      assert.deepEqual(remaining, [9, 8, 7, 6, 5, 4, 3, 2, 1, 0], 'each process sees what the other spent');
      for (const port of ports) {
        const refused = await list(port);
        assert.equal(refused.status, 429);
        assert.match(refused.headers.get('content-type') ?? '', /^application\/problem\+json/);
        assert.equal(((await refused.json()) as { code: string }).code, 'rate_limited');
        assert.ok(Number(refused.headers.get('retry-after')) >= 1);
        assert.equal(refused.headers.get('ratelimit-policy'), '"api-key";q=10;w=10');
      }

      // Requests without a key share one budget per client address in the same way.
      const anonymous = (port: number) => fetch(`http://127.0.0.1:${port}/api/v1/records`);
      const addressRemaining: number[] = [];
      for (let i = 0; i < 10; i++) {
        const response = await anonymous(ports[i % 2]!);
        assert.equal(response.status, 401);
        assert.equal(response.headers.get('ratelimit-policy'), '"client-address";q=10;w=10');
        addressRemaining.push(remainingOf(response.headers.get('ratelimit')));
      }
      assert.deepEqual(addressRemaining, [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
      for (const port of ports) assert.equal((await anonymous(port)).status, 429);
    } finally {
      await Promise.all(
        children.map(async (child) => {
          if (child.exitCode !== null) return;
          const exited = new Promise((resolve) => child.once('exit', resolve));
          child.kill('SIGTERM');
          await exited;
        }),
      );
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('gives a 304’s token back in Redis, the bucket’s last one included, while full answers spend theirs', async () => {
    const api = await startApi(REDIS_URL, 30); // buckets of 5, the key's starting with its first request
    try {
      const created = await api.request({ method: 'POST', url: '/api/v1/categories', payload: { name: 'Plumbing' } });
      assert.equal(created.statusCode, 201, created.body);
      const url = `/api/v1/categories/${(created.json() as { id: string }).id}`;
      const read = await api.request({ method: 'GET', url });
      const revalidate = () => api.request({ method: 'GET', url, headers: { 'if-none-match': String(read.headers.etag) } });
      for (let i = 0; i < 15; i++) {
        const notModified = await revalidate();
        assert.equal(notModified.statusCode, 304);
        assert.equal(remainingOf(notModified.headers.ratelimit), 3);
      }
      assert.equal(await api.sharedCount(), '2', 'Redis counts only the two full answers');
      await api.request({ method: 'GET', url });
      await api.request({ method: 'GET', url });
      // The bucket's last token, taken and given back: the next full answer is not refused from memory.
      for (let i = 0; i < 5; i++) assert.equal(remainingOf((await revalidate()).headers.ratelimit), 1);
      const last = await api.request({ method: 'GET', url });
      assert.equal(last.statusCode, 200);
      assert.equal(remainingOf(last.headers.ratelimit), 0);
      assert.equal((await revalidate()).statusCode, 429);
      assert.equal((await api.request({ method: 'GET', url })).statusCode, 429);
    } finally {
      await api.close();
    }
  });

  it('neither limits nor connects to Redis when WO_RATE_LIMIT_PER_MINUTE is 0', async () => {
    const prefix = uniquePrefix();
    const dataDir = mkdtempSync(path.join(tmpdir(), 'wo-rate-off-'));
    const config = loadConfig({ WO_DATA_DIR: dataDir, REDIS_URL, WO_RATE_LIMIT_PER_MINUTE: '0', WO_RATE_LIMIT_REDIS_PREFIX: prefix });
    const context = await createContext(config, { logger: pino({ level: 'silent' }) });
    const app = await buildApp(context);
    try {
      await app.ready();
      assert.equal(context.rateLimiter, undefined);
      for (let i = 0; i < 20; i++) {
        const answer = await app.inject({ method: 'GET', url: '/api/v1/records' });
        assert.equal(answer.statusCode, 401);
        assert.equal(answer.headers.ratelimit, undefined);
      }
      assert.deepEqual(await redis.keys(`${prefix}:*`), []);
    } finally {
      await app.close();
      await context.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('keeps serving while Redis is unreachable, counting in the process, with one warning', async () => {
    const api = await startApi(`redis://127.0.0.1:${await freePort()}`, 30); // nothing listens there; buckets of 5
    try {
      const answers = [];
      for (let i = 0; i < 7; i++) answers.push(await api.list());
      assert.deepEqual(answers.map((a) => a.status), [200, 200, 200, 200, 200, 429, 429], 'the bucket is enforced in the process');
      assert.deepEqual(answers.slice(0, 5).map((a) => a.remaining), [4, 3, 2, 1, 0]);
      assert.equal(api.redisWarnings().length, 1, 'one warning, not one per request');
      assert.ok(answers.every((a) => a.ms < 1_000), 'no request waits for Redis');
    } finally {
      await api.close();
    }
  });

  it('falls back to counting in the process when Redis goes away, and shares the budget again once it is back', async () => {
    const proxy = await RedisProxy.start();
    const api = await startApi(proxy.url, 600); // buckets of 100
    try {
      for (let i = 0; i < 5; i++) assert.equal((await api.list()).status, 200);
      assert.equal(await api.sharedCount(), '5');

      await proxy.stop();
      const during = [await api.list(), await api.list()];
      assert.deepEqual(during.map((a) => a.status), [200, 200]);
      assert.deepEqual(during.map((a) => a.remaining), [99, 98], 'a fresh bucket of this process');
      await waitFor(() => api.redisWarnings().length > 0, 5_000, 'the warning that Redis is unavailable');

      await proxy.listen();
      await waitFor(
        async () => {
          const before = Number(await api.sharedCount());
          const answer = await api.list();
          const shared = Number(await api.sharedCount());
          return shared === before + 1 && answer.remaining === 100 - shared;
        },
        15_000,
        'requests to be counted in Redis again',
      );
      assert.ok(api.logs.some((line) => line.level === 30 && /Redis is reachable again/.test(line.msg)));
    } finally {
      await api.close();
      await proxy.stop();
    }
  });

  it('holds at most one request a second for the command timeout when Redis stops answering', async () => {
    const proxy = await RedisProxy.start();
    const api = await startApi(proxy.url, 6000);
    try {
      assert.equal(await api.list().then((a) => a.status), 200);
      assert.equal(await api.sharedCount(), '1');
      proxy.freeze();
      const answers = [];
      for (let i = 0; i < 20; i++) answers.push(await api.list());
      assert.ok(answers.every((a) => a.status === 200));
      assert.ok(answers.every((a) => a.ms < 1_000), `the longest wait was ${Math.max(...answers.map((a) => a.ms)).toFixed(0)} ms`);
      assert.ok(answers.filter((a) => a.ms >= 190).length <= 5, 'after a timeout, requests skip Redis for a second');
      assert.equal(api.redisWarnings().length, 1);
    } finally {
      await api.close();
      await proxy.stop();
    }
  });
});
