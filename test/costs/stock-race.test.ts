// On-hand never goes negative under racing issues: 50 concurrent issues of 1 against an on-hand of 20
// give exactly 20 successes and 30 insufficient_stock, on SQLite in one process, and on PostgreSQL
// through two `wo serve --no-worker` child processes sharing the database.
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
import { itOnEachDatabase } from '../helpers/test-app.js';
import { get, stockedWorkOrder, tenantIn } from './helpers.js';

const ISSUES = 50;
const ON_HAND = '20';

describe('racing issues of a part', () => {
  itOnEachDatabase('gives exactly 20 of 50 concurrent issues of 1 against an on-hand of 20, and leaves 0 on hand', async (t) => {
    const tenant = await tenantIn(t, 'EUR');
    const { main, part, recordId } = await stockedWorkOrder(tenant, { stock: [ON_HAND, '0'] });
    const answers = await Promise.all(
      Array.from({ length: ISSUES }, () => tenant.request({ method: 'POST', url: `/api/v1/records/${recordId}/parts`, payload: { partId: part, locationId: main, quantity: '1' } })),
    );
    const statuses = answers.map((a) => (a.statusCode === 201 ? 'issued' : `${a.statusCode} ${a.json().code}`));
    assert.equal(statuses.filter((s) => s === 'issued').length, 20, statuses.join(', '));
    assert.equal(statuses.filter((s) => s === '409 insufficient_stock').length, 30, statuses.join(', '));
    assert.equal((await get(tenant, `/api/v1/parts/${part}/stock`)).stock[0].onHand, '0');
    const record = await get(tenant, `/api/v1/records/${recordId}`);
    assert.equal(record.costs.parts.amount, '318.00', '20 × 15.90');
  });
});

if (POSTGRES_URL) {
  describe('racing issues of a part across two API processes on PostgreSQL', () => {
    let deployment: EmptyDeployment | undefined;
    const children: ChildProcess[] = [];
    const ports: string[] = [];
    let key: string;
    let ids: { main: string; part: string; recordId: string };

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
      deployment = await emptyDeployment('postgres', 'stock');
      const env = { ...deployment.env, LOG_LEVEL: 'silent', WO_SECRET_KEY: randomBytes(32).toString('base64'), WO_KEYS_DIR: path.join(deployment.dataDir, 'keys'), WO_RATE_LIMIT_PER_MINUTE: '0' };
      const setup = await createContext(loadConfig(env), { logger: pino({ level: 'silent' }) });
      try {
        const org = await setup.organizations.create('Stock Org', { currency: 'EUR' });
        key = (await setup.apiKeys.create({ orgId: org.id, name: 'race', scopes: ALL_SCOPES, createdBy: 'test' })).key;
      } finally {
        await setup.close();
      }
      for (let i = 0; i < 2; i++) {
        const port = String(await freePort());
        ports.push(port);
        children.push(await startChildService(['serve', '--no-worker'], { ...env, PORT: port }, port));
      }
      const [a] = ports as [string];
      const main = await call(a, 'POST', '/api/v1/locations', { name: 'Main storeroom' });
      const part = await call(a, 'POST', '/api/v1/parts', { sku: 'CART-35', name: 'Cartridge', unit: 'pcs', unitCost: { amount: '15.90', currency: 'EUR' } });
      assert.equal((await call(a, 'POST', `/api/v1/parts/${part.body.id}/movements`, { type: 'receive', locationId: main.body.id, quantity: ON_HAND })).status, 201);
      const category = await call(a, 'POST', '/api/v1/categories', { name: 'Plumbing' });
      const record = await call(a, 'POST', '/api/v1/records', { categoryId: category.body.id, address: '1 Quay', requesterName: 'Ann', description: 'Leak' });
      ids = { main: main.body.id, part: part.body.id, recordId: record.body.id };
    });
    after(async () => {
      await Promise.all(children.map((child) => killHard(child)));
      await deployment?.remove();
    });

    it('gives exactly 20 successes and 30 insufficient_stock of 50 issues split over both processes, and leaves 0 on hand', async () => {
      const answers = await Promise.all(
        Array.from({ length: ISSUES }, (_, i) => call(ports[i % 2]!, 'POST', `/api/v1/records/${ids.recordId}/parts`, { partId: ids.part, locationId: ids.main, quantity: '1' })),
      );
      const statuses = answers.map((a) => (a.status === 201 ? 'issued' : `${a.status} ${a.body.code}`));
      assert.equal(statuses.filter((s) => s === 'issued').length, 20, statuses.join(', '));
      assert.equal(statuses.filter((s) => s === '409 insufficient_stock').length, 30, statuses.join(', '));
      const stock = await call(ports[1]!, 'GET', `/api/v1/parts/${ids.part}/stock`);
      assert.equal(stock.body.stock[0].onHand, '0');
      const ledger = await call(ports[0]!, 'GET', `/api/v1/parts/${ids.part}/movements?limit=100`);
      assert.equal(ledger.body.total, 21, 'the receipt and 20 issues');
      const record = await call(ports[1]!, 'GET', `/api/v1/records/${ids.recordId}`);
      assert.deepEqual([record.body.costs.parts.amount, record.body.costs.total.amount], ['318.00', '318.00']);
    });
  });
}
