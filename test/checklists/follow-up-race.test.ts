// A failed item creates exactly one follow-up work order, however many answers to it race: on
// PostgreSQL through two `wo serve --no-worker` child processes sharing the database, and on each
// database in one process.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { createContext } from '../../src/context.js';
import { ALL_SCOPES } from '../../src/features.js';
import { POSTGRES_URL } from '../helpers/databases.js';
import { emptyDeployment, type EmptyDeployment } from '../helpers/child-processes.js';
import { killHard, startChildService } from '../helpers/child-services.js';
import { freePort } from '../helpers/free-port.js';
import { itOnEachDatabase, seedCategory } from '../helpers/test-app.js';

const WORK_ORDERS = 8;
const ANSWERS_EACH = 4;
const items = (followUpCategoryId: string) => [{ key: 'pressure', label: 'Pressure', type: 'number', required: true, min: 1, max: 2, onFail: { categoryId: followUpCategoryId } }];

/** Every answer succeeded and named one follow-up per work order; `followUps` is how many exist. */
function assertOneEach(answers: { status: number; body: Record<string, any> }[][], followUps: number): void {
  for (const own of answers) {
    assert.deepEqual(own.map((a) => a.status), Array(ANSWERS_EACH).fill(200), JSON.stringify(own.map((a) => a.body)));
    assert.equal(new Set(own.map((a) => a.body.followUpRecordId)).size, 1, JSON.stringify(own.map((a) => a.body)));
  }
  assert.equal(followUps, WORK_ORDERS);
}

describe('racing answers to a failed item', () => {
  itOnEachDatabase('creates one follow-up per work order when each is answered failed four times at once', async (t) => {
    const tenant = await t.newTenant();
    const categoryId = await seedCategory(tenant);
    const followUpCategoryId = await seedCategory(tenant);
    const checklist = (await tenant.request({ method: 'POST', url: '/api/v1/checklists', payload: { name: 'Race', items: items(followUpCategoryId) } })).json();
    const recordIds: string[] = [];
    for (let i = 0; i < WORK_ORDERS; i++) recordIds.push((await tenant.request({ method: 'POST', url: '/api/v1/records', payload: { categoryId, address: 'x', requesterName: 'y', description: 'z', checklistIds: [checklist.id] } })).json().id);
    const answers = await Promise.all(
      recordIds.map((id) =>
        Promise.all(Array.from({ length: ANSWERS_EACH }, (_, n) => tenant.request({ method: 'PUT', url: `/api/v1/records/${id}/checklists/${checklist.id}/items/pressure`, payload: { value: 3 + n } }).then((r) => ({ status: r.statusCode, body: r.json() })))),
      ),
    );
    const followUps = (await tenant.request({ method: 'GET', url: `/api/v1/records?categoryId=${followUpCategoryId}` })).json().total;
    assertOneEach(answers, followUps);
  });
});

if (POSTGRES_URL) {
  describe('racing answers to a failed item across two API processes on PostgreSQL', () => {
    let deployment: EmptyDeployment | undefined;
    const children: ChildProcess[] = [];
    const ports: string[] = [];
    let key: string;

    const call = async (port: string, method: string, url: string, body?: unknown) => {
      const response = await fetch(`http://127.0.0.1:${port}${url}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      return { status: response.status, body: (text ? JSON.parse(text) : {}) as Record<string, any> };
    };

    before(async () => {
      deployment = await emptyDeployment('postgres', 'followup');
      const env = { ...deployment.env, LOG_LEVEL: 'silent', WO_SECRET_KEY: randomBytes(32).toString('base64'), WO_KEYS_DIR: path.join(deployment.dataDir, 'keys'), WO_RATE_LIMIT_PER_MINUTE: '0' };
      const setup = await createContext(loadConfig(env), { logger: pino({ level: 'silent' }) });
      try {
        const org = await setup.organizations.create('Follow-up Org');
        key = (await setup.apiKeys.create({ orgId: org.id, name: 'race', scopes: ALL_SCOPES, createdBy: 'test' })).key;
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
      await deployment?.remove();
    });

    it('creates one follow-up per work order when its failed item is answered four times at once over both processes', async () => {
      const [a] = ports as [string];
      const categoryId = (await call(a, 'POST', '/api/v1/categories', { name: 'Boilers' })).body.id;
      const followUpCategoryId = (await call(a, 'POST', '/api/v1/categories', { name: 'Follow-ups' })).body.id;
      const checklist = (await call(a, 'POST', '/api/v1/checklists', { name: 'Race', items: items(followUpCategoryId) })).body;
      const recordIds: string[] = [];
      for (let i = 0; i < WORK_ORDERS; i++) recordIds.push((await call(a, 'POST', '/api/v1/records', { categoryId, address: 'x', requesterName: 'y', description: 'z', checklistIds: [checklist.id] })).body.id);
      const answers = await Promise.all(
        recordIds.map((id) => Promise.all(Array.from({ length: ANSWERS_EACH }, (_, n) => call(ports[n % 2]!, 'PUT', `/api/v1/records/${id}/checklists/${checklist.id}/items/pressure`, { value: 3 + n })))),
      );
      const followUps = (await call(ports[1]!, 'GET', `/api/v1/records?categoryId=${followUpCategoryId}`)).body.total;
      assertOneEach(answers, followUps);
    });
  });
}
