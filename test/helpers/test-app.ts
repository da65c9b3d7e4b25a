import { mkdtempSync, rmSync } from 'node:fs';
import { it } from 'node:test';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { pino, type Logger } from 'pino';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createContext, type AppContext } from '../../src/context.js';
import type { Clock } from '../../src/clock.js';
import type { Scope } from '../../src/keys/scopes.js';
import { ALL_SCOPES } from '../../src/features.js';
import { POSTGRES_URL, TEST_DIALECTS, createPostgresSchema, withSchemaChangeLock, type TestDialect } from './databases.js';

export interface TestApp {
  app: FastifyInstance;
  context: AppContext;
  config: Config;
  dataDir: string;
  /** Creates an organization with a key holding `scopes` (all scopes by default). */
  newTenant(scopes?: Scope[]): Promise<Tenant>;
  close(): Promise<void>;
}

export interface Tenant {
  orgId: string;
  keyId: string;
  key: string;
  /** app.inject with this tenant's Bearer key. */
  request(options: InjectOptions): Promise<LightMyRequestResponse>;
}

/** A controllable clock for tests that move through time (expiry, replay windows). */
export class TestClock implements Clock {
  constructor(private current = new Date()) {}
  now(): Date {
    return new Date(this.current);
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}

export interface TestAppOptions {
  clock?: Clock;
  env?: Record<string, string>;
  /** The service's logger (silent by default). */
  logger?: Logger;
  /** PostgreSQL: a database of the test's own (createPostgresDatabase) instead of a schema in the shared one. */
  databaseUrl?: string;
}

let tenantCounter = 0;

/** A real app on a fresh database: a new SQLite file, or a new PostgreSQL schema. */
export async function startTestApp(dialect: TestDialect, options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'wo-test-'));
  const pgSchema = dialect === 'postgres' && !options.databaseUrl ? await createPostgresSchema() : undefined;
  const config = loadConfig({
    WO_DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    WO_WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WO_WEBHOOK_RETRY_BASE_MS: '50',
    WO_PROOF_BATCH_INTERVAL_MS: '50',
    ...(dialect === 'postgres' ? { DATABASE_URL: options.databaseUrl ?? POSTGRES_URL! } : {}),
    ...options.env,
  });
  const openContext = () =>
    createContext(config, {
      logger: options.logger ?? pino({ level: 'silent' }),
      createKeys: true,
      ...(options.clock ? { clock: options.clock } : {}),
      ...(pgSchema ? { databaseSchema: pgSchema.schema } : {}),
    });
  // Migrations introspect every schema: never while a parallel test file drops one.
  const context = pgSchema ? await withSchemaChangeLock(openContext) : await openContext();
  const app = await buildApp(context);
  await app.ready();

  return {
    app,
    context,
    config,
    dataDir,
    async newTenant(scopes: Scope[] = ALL_SCOPES) {
      const org = await context.organizations.create(`Org ${++tenantCounter} ${Math.random().toString(36).slice(2, 8)}`);
      const { apiKey, key } = await context.apiKeys.create({ orgId: org.id, name: 'test', scopes, createdBy: 'test' });
      return {
        orgId: org.id,
        keyId: apiKey.id,
        key,
        request: (opts: InjectOptions) => app.inject({ ...opts, headers: { authorization: `Bearer ${key}`, ...opts.headers } }),
      };
    },
    async close() {
      await app.close();
      await context.close();
      await pgSchema?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A category and a valid work-order body that uses it. */
export async function seedCategory(tenant: Tenant, name = `Plumbing ${Math.random().toString(36).slice(2, 8)}`): Promise<string> {
  const response = await tenant.request({ method: 'POST', url: '/api/v1/categories', payload: { name } });
  if (response.statusCode !== 201) throw new Error(`seeding category failed: ${response.statusCode} ${response.body}`);
  return response.json().id as string;
}

export function recordBody(categoryId: string, overrides: Record<string, unknown> = {}) {
  return { categoryId, address: '12 Harbour Road, Unit 4', requesterName: 'Ann Tenant', description: 'Kitchen tap leaks', ...overrides };
}

/** A work order in a new category, created through the API; answers its id. */
export async function createWorkOrder(tenant: Tenant, overrides: Record<string, unknown> = {}): Promise<string> {
  const response = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(await seedCategory(tenant), overrides) });
  if (response.statusCode !== 201) throw new Error(`creating a work order failed: ${response.statusCode} ${response.body}`);
  return response.json().id as string;
}

/** Polls `check` until it returns a value, or fails after `timeoutMs`. Never a bare sleep. */
export async function waitFor<T>(check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Declares one test per database dialect, each on its own fresh database (a new SQLite file or a
 * new PostgreSQL schema) that is torn down afterwards.
 */
export function itOnEachDatabase(name: string, fn: (harness: TestApp) => Promise<void>, options: TestAppOptions = {}): void {
  for (const dialect of TEST_DIALECTS) {
    it(`${name} [${dialect}]`, async () => {
      const harness = await startTestApp(dialect, options);
      try {
        await fn(harness);
      } finally {
        await harness.close();
      }
    });
  }
}
