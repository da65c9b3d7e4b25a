import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe } from 'node:test';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import type { WorkOrderClient } from '@work-order-api/client';
import { openMirror } from './erp-sync.js';
import { itAgainstLiveService, workOrderBody } from '../../sdk/test/live-service.js';
import { waitFor } from '../../test/helpers/test-app.js';

const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'erp-sync.ts');

/** The example as an operator runs it: its own process. */
function startSync(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, exited, output: () => output };
}

/** Some work orders moved through a few actions: each step one or more feed events. */
async function makeChanges(client: WorkOrderClient, categoryId: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const record = await client.createRecord({ body: workOrderBody(categoryId) });
    await client.assignRecord({ path: { id: record.id }, body: { assignee: `Tech ${i}` } });
    if (i % 2 === 0) await client.startRecord({ path: { id: record.id } });
    if (i % 4 === 0) await client.completeRecord({ path: { id: record.id }, body: { resolutionNotes: 'Fixed' } });
    if (i % 3 === 0) await client.updateRecord({ path: { id: record.id }, body: { description: `Updated ${i}` } });
  }
}

const countApplied = (databasePath: string) => {
  const db = new Database(databasePath, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM applied_events').get() as { n: number }).n;
  } catch {
    return 0;
  } finally {
    db.close();
  }
};

describe('examples/erp-sync against a real server', () => {
  itAgainstLiveService('mirrors every work order from the feed, and resumes after a SIGKILL without losing or repeating an event', async ({ client, baseUrl, tenant }) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wo-erp-'));
    const databasePath = path.join(dir, 'erp.db');
    openMirror(databasePath).close();
    const env = { WO_URL: baseUrl, WO_KEY: tenant.key, ERP_DB: databasePath };
    const category = await client.createCategory({ body: { name: 'Plumbing' } });
    let sync = startSync(env);
    try {
      await makeChanges(client, category.id, 6);
      await waitFor(() => countApplied(databasePath) >= 5, 30_000, 'the first events to be applied');
      // Killed while changes keep coming: mid-stream, with no chance to clean up.
      const moreChanges = makeChanges(client, category.id, 6);
      sync.child.kill('SIGKILL');
      await sync.exited;
      await moreChanges;
      const appliedAtKill = countApplied(databasePath);
      await makeChanges(client, category.id, 4);

      sync = startSync(env);
      const types = ['record.created', 'record.updated', 'record.assigned', 'record.status_changed', 'record.completed', 'record.closed'].join(',');
      const feedIds: string[] = [];
      await waitFor(async () => {
        feedIds.length = 0;
        for await (const event of client.listEvents.all({ query: { type: types } })) feedIds.push(event.id);
        return feedIds.length > appliedAtKill && countApplied(databasePath) === feedIds.length;
      }, 60_000, `the mirror to catch up:\n${sync.output()}`);
      // Resumed from its cursor, and once caught up it says it is waiting rather than going quiet.
      assert.match(sync.output(), /^following the event feed of \S+ after sequence \d+$/m);
      await waitFor(() => /^up to date \(sequence \d+\); waiting for new events…$/m.test(sync.output()), 10_000, `the sync to say it waits:\n${sync.output()}`);

      const mirror = new Database(databasePath, { readonly: true });
      try {
        const applied = mirror.prepare('SELECT id FROM applied_events ORDER BY sequence').all() as Array<{ id: string }>;
        assert.deepEqual(applied.map((row) => row.id), feedIds, 'every event applied once, in feed order');
        const rows = new Map((mirror.prepare('SELECT id, status, assignee, description FROM work_orders').all() as Array<{ id: string; status: string; assignee: string; description: string }>).map((row) => [row.id, row]));
        let records = 0;
        for await (const record of client.listRecords.all()) {
          records++;
          assert.deepEqual(rows.get(record.id), { id: record.id, status: record.status, assignee: record.assignee, description: record.description });
        }
        assert.equal(records, 16);
        assert.equal(rows.size, 16);
      } finally {
        mirror.close();
      }
    } finally {
      sync.child.kill('SIGKILL');
      await sync.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
