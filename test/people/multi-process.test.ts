// Referential rules of people and vendors with real processes: two `wo serve --no-worker` on one
// PostgreSQL database. A delete of a person racing an assignment of them on the other process ends
// one way or the other, never both (no open work order ever names someone who is gone); and an access
// link revoked through one process stops working on the other at once.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { createContext } from '../../src/context.js';
import { ALL_SCOPES } from '../../src/features.js';
import { POSTGRES_URL, createPostgresDatabase } from '../helpers/databases.js';
import { killHard, startChildService } from '../helpers/child-services.js';
import { freePort } from '../helpers/free-port.js';

const ROUNDS = 30;

interface Answer {
  status: number;
  body: { id?: string; code?: string } & Record<string, unknown>;
}

if (POSTGRES_URL) {
  describe('people and access links across two API processes on PostgreSQL', () => {
    let dataDir: string;
    let database: { url: string; drop: () => Promise<void> };
    let env: Record<string, string>;
    const children: ChildProcess[] = [];
    const ports: string[] = [];
    let key: string;
    let categoryId: string;

    const call = async (port: string, method: string, url: string, body?: unknown): Promise<Answer> => {
      const response = await fetch(`http://127.0.0.1:${port}${url}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : {} };
    };

    before(async () => {
      dataDir = mkdtempSync(path.join(tmpdir(), 'wo-people-'));
      database = await createPostgresDatabase('wo_people');
      env = {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        WO_DATA_DIR: dataDir,
        HOST: '127.0.0.1',
        LOG_LEVEL: 'silent',
        DATABASE_URL: database.url,
        WO_SECRET_KEY: randomBytes(32).toString('base64'),
        WO_KEYS_DIR: path.join(dataDir, 'keys'),
        WO_PUBLIC_URL: 'http://127.0.0.1',
        WO_RATE_LIMIT_PER_MINUTE: '0',
        WO_WORKER_PORT: '0',
      };
      const setup = await createContext(loadConfig(env), { logger: pino({ level: 'silent' }) });
      try {
        const org = await setup.organizations.create('People Org');
        key = (await setup.apiKeys.create({ orgId: org.id, name: 'race', scopes: ALL_SCOPES, createdBy: 'test' })).key;
        categoryId = (await setup.categories.create(org.id, { name: 'Plumbing' })).id;
      } finally {
        await setup.close();
      }
      for (let i = 0; i < 2; i++) {
        const port = String(await freePort());
        ports.push(port);
        children.push(await startChildService(['serve', '--no-worker'], { ...env, PORT: port }, port));
      }
    });
    after(async () => {
      await Promise.all(children.map((child) => killHard(child)));
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('ends every race of a delete and an assignment one way or the other, never both', async (t) => {
      const outcomes = { assignmentFirst: 0, deleteFirst: 0 };
      for (let round = 0; round < ROUNDS; round++) {
        const [a, b] = round % 2 === 0 ? ports : [...ports].reverse();
        const person = await call(a!, 'POST', '/api/v1/people', { name: `Technician ${round}` });
        assert.equal(person.status, 201);
        const assignees = [{ type: 'person', id: person.body.id }];
        // Half the rounds race a create naming them, half an assign of an existing work order.
        const existing = round % 4 < 2 ? undefined : await call(a!, 'POST', '/api/v1/records', { categoryId, address: `${round} Quay`, requesterName: 'Ann', description: 'Leak', assignee: 'Desk' });
        const assignment = existing
          ? call(a!, 'POST', `/api/v1/records/${existing.body.id}/assign`, { assignees })
          : call(a!, 'POST', '/api/v1/records', { categoryId, address: `${round} Quay`, requesterName: 'Ann', description: 'Leak', assignees });
        const [assigned, deleted] = await Promise.all([assignment, call(b!, 'DELETE', `/api/v1/people/${person.body.id}`)]);
        const ok = assigned.status === 200 || assigned.status === 201;
        if (ok) {
          assert.deepEqual([deleted.status, deleted.body.code], [409, 'in_use'], `round ${round}: the assignment won, so the delete must be refused`);
          outcomes.assignmentFirst++;
        } else {
          assert.equal(deleted.status, 204, `round ${round}: ${JSON.stringify(deleted)}`);
          assert.equal(assigned.status, 422, `round ${round}: the delete won, so the assignment must be refused: ${JSON.stringify(assigned)}`);
          outcomes.deleteFirst++;
        }
      }
      const check = await createContext(loadConfig(env), { logger: pino({ level: 'silent' }), migrate: false });
      try {
        const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM record_assignees ra LEFT JOIN people p ON p.id = ra.assignee_id WHERE ra.assignee_type = 'person' AND p.id IS NULL`.execute(check.database.db);
        assert.equal(Number(rows[0]!.n), 0, 'no work order names a person who was deleted');
      } finally {
        await check.close();
      }
      assert.equal(outcomes.assignmentFirst + outcomes.deleteFirst, ROUNDS);
      t.diagnostic(`assignment first ${outcomes.assignmentFirst} times, delete first ${outcomes.deleteFirst} times`);
    });

    it('stops an access link on the other process the moment it is revoked', async () => {
      const [a, b] = ports as [string, string];
      const vendor = await call(a, 'POST', '/api/v1/vendors', { name: 'Acme Plumbing' });
      const record = await call(a, 'POST', '/api/v1/records', { categoryId, address: '1 Quay', requesterName: 'Ann', description: 'Leak', assignees: [{ type: 'vendor', id: vendor.body.id }] });
      for (const [maker, user] of [[a, b], [b, a]] as const) {
        const link = await call(maker, 'POST', `/api/v1/records/${record.body.id}/access-links`, { vendorId: vendor.body.id });
        assert.equal(link.status, 201);
        const page = () => fetch(`http://127.0.0.1:${user}${new URL(link.body.url as string).pathname}`);
        assert.equal((await page()).status, 200, 'the link works on the other process');
        assert.equal((await call(maker, 'DELETE', `/api/v1/records/${record.body.id}/access-links/${link.body.id}`)).status, 204);
        assert.equal((await page()).status, 404, 'and stops there with the next request');
        const asKey = await fetch(`http://127.0.0.1:${user}/api/v1/records/${record.body.id}`, { headers: { authorization: `Bearer ${link.body.token as string}` } });
        assert.equal(asKey.status, 401);
      }
    });
  });
}
