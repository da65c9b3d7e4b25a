// Approvals of one work request racing over two `wo serve --no-worker` processes that share one
// PostgreSQL database make exactly one work order (the row lock, and the unique records.request_id).
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

const APPROVALS = 20;

if (POSTGRES_URL) {
  describe('racing approvals of one work request across two API processes on PostgreSQL', () => {
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
      deployment = await emptyDeployment('postgres', 'approve');
      const env = { ...deployment.env, LOG_LEVEL: 'silent', WO_SECRET_KEY: randomBytes(32).toString('base64'), WO_KEYS_DIR: path.join(deployment.dataDir, 'keys'), WO_RATE_LIMIT_PER_MINUTE: '0' };
      const setup = await createContext(loadConfig(env), { logger: pino({ level: 'silent' }) });
      try {
        const org = await setup.organizations.create('Request Org');
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

    it('gives exactly one work order and 19 request_decided for 20 approvals split over both processes, three rounds', async () => {
      const [a] = ports as [string];
      const category = await call(a, 'POST', '/api/v1/categories', { name: 'Electrical' });
      for (let round = 0; round < 3; round++) {
        const filed = await call(a, 'POST', '/api/v1/requests', { description: `Light out, round ${round}`, requesterName: 'Ann' });
        assert.equal(filed.status, 201, JSON.stringify(filed.body));
        const answers = await Promise.all(Array.from({ length: APPROVALS }, (_, i) => call(ports[i % 2]!, 'POST', `/api/v1/requests/${filed.body.id}/approve`, { categoryId: category.body.id })));
        const statuses = answers.map((answer) => (answer.status === 200 ? 'approved' : `${answer.status} ${answer.body.code}`));
        assert.equal(statuses.filter((s) => s === 'approved').length, 1, statuses.join(', '));
        assert.equal(statuses.filter((s) => s === '409 request_decided').length, APPROVALS - 1, statuses.join(', '));
        const recordId = answers.find((answer) => answer.status === 200)!.body.recordId as string;
        assert.equal((await call(ports[1]!, 'GET', `/api/v1/requests/${filed.body.id}`)).body.recordId, recordId);
      }
      assert.equal((await call(a, 'GET', '/api/v1/records')).body.total, 3);
    });
  });
}
