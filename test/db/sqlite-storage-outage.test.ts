import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, rmdirSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { recordBody, seedCategory, startTestApp, waitFor, type TestApp, type Tenant } from '../helpers/test-app.js';

/** Creates sent at once while the database cannot write. */
const CLIENTS = 4;
/** The longest description a work order takes: the database grows fast. */
const LONG_DESCRIPTION = 'Water everywhere. '.repeat(270);

interface CreateAnswer {
  status: number;
  code?: string;
  id?: string;
  retryAfter?: string;
  contentType?: string;
}

/** Mounts a tmpfs of `size` on `dir`; false when this process may not (only root may, as a rule). */
function mountTmpfs(dir: string, size: string): boolean {
  return spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir], { stdio: 'ignore' }).status === 0;
}

const probe = mkdtempSync(path.join(tmpdir(), 'wo-mount-probe-'));
const CAN_MOUNT = mountTmpfs(probe, '64k') && spawnSync('umount', [probe]).status === 0;
rmdirSync(probe, { maxRetries: 3 });

async function create(tenant: Tenant, categoryId: string): Promise<CreateAnswer> {
  const response = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { description: LONG_DESCRIPTION }) });
  const body = response.json() as { id?: string; code?: string };
  return {
    status: response.statusCode,
    ...(body.code ? { code: body.code } : {}),
    ...(response.statusCode === 201 ? { id: body.id! } : {}),
    ...(response.headers['retry-after'] ? { retryAfter: String(response.headers['retry-after']) } : {}),
    ...(response.headers['content-type'] ? { contentType: String(response.headers['content-type']) } : {}),
  };
}

/**
 * Creates keep coming while `fail` makes the database unable to write and until `mend` lets it again.
 * Checks that every answer was a 201 or a 503 `unavailable` problem with Retry-After, that the group
 * commit writer commits again in the same process, and that every work order answered 201 can be
 * read back.
 */
async function throughStorageFailure(harness: TestApp, fail: () => Promise<void>, mend: () => Promise<void>): Promise<CreateAnswer[]> {
  const tenant = await harness.newTenant();
  const categoryId = await seedCategory(tenant);
  const stats = harness.context.database.groupCommit!;
  const answers: CreateAnswer[] = [];
  let load = true;
  const clients = Array.from({ length: CLIENTS }, async () => {
    while (load) answers.push(await create(tenant, categoryId));
  });
  let mended = false;
  try {
    await waitFor(() => answers.filter((answer) => answer.status === 201).length >= 10, 20_000, 'some creates before the failure');
    await fail();
    const failedFrom = answers.length;
    // Counted as refused whatever the status: which statuses they were is checked below.
    await waitFor(() => answers.slice(failedFrom).filter((answer) => answer.status !== 201).length >= 20, 30_000, 'creates to be refused');
    await mend();
    mended = true;
    const mendedFrom = answers.length;
    const commitsBefore = stats.commits;
    await waitFor(() => answers.slice(mendedFrom).filter((answer) => answer.status === 201).length >= 10, 20_000, 'creates to succeed again without a restart');
    assert.ok(stats.commits > commitsBefore, 'the group commit writer commits again');
  } finally {
    load = false;
    await Promise.all(clients);
    if (!mended) await mend();
  }
  const unexpected = answers.filter((answer) => !(answer.status === 201 || (answer.status === 503 && answer.code === 'unavailable' && /^\d+$/.test(answer.retryAfter ?? '') && /^application\/problem\+json/.test(answer.contentType ?? ''))));
  assert.deepEqual(unexpected, [], 'every answer a 201, or a 503 `unavailable` problem with Retry-After');
  assert.ok(answers.some((answer) => answer.status === 503));
  // Nothing accepted is lost: every 201 reads back.
  for (const answer of answers.filter((a) => a.status === 201)) {
    assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/records/${answer.id}` })).statusCode, 200, `work order ${answer.id} answered 201 is stored`);
  }
  const ready = await harness.app.inject({ method: 'GET', url: '/readyz' });
  assert.equal(ready.statusCode, 200);
  return answers;
}

describe('SQLite that cannot write: 503 while it lasts, recovered without a restart', () => {
  it('answers 503 while the database may not grow (SQLite’s own page limit: a full disk as SQLite reports it)', async () => {
    const harness = await startTestApp('sqlite');
    try {
      const { db } = harness.context.database;
      const groupCommit = harness.context.database.groupCommit!;
      const failedGroups = groupCommit.failures;
      await throughStorageFailure(
        harness,
        async () => {
          // The database's connection may hold no more pages than it has now.
          const [row] = (await sql<{ page_count: number }>`PRAGMA page_count`.execute(db)).rows;
          await sql.raw(`PRAGMA max_page_count = ${row!.page_count}`).execute(db);
        },
        async () => {
          await sql.raw('PRAGMA max_page_count = 4294967294').execute(db);
        },
      );
      // SQLite rolled back whole groups (the writes that shared a failed one's commit), and the writer went on.
      assert.ok(groupCommit.failures > failedGroups, 'some commit groups failed as a whole');
    } finally {
      await harness.close();
    }
  });

  it('answers 503 while its file system is full, and recovers once space is freed', { skip: !CAN_MOUNT && 'needs permission to mount a tmpfs' }, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wo-full-'));
    assert.ok(mountTmpfs(dir, '16m'), 'a tmpfs mounted');
    const filler = path.join(dir, 'filler');
    let harness: TestApp | undefined;
    try {
      harness = await startTestApp('sqlite', { env: { WO_DATA_DIR: dir } });
      const groupCommit = harness.context.database.groupCommit!;
      const failedGroups = groupCommit.failures;
      await throughStorageFailure(
        harness,
        async () => {
          // Everything the file system has left, taken by another file.
          const fd = openSync(filler, 'w');
          const chunk = Buffer.alloc(64 * 1024, 1);
          try {
            for (;;) writeSync(fd, chunk);
          } catch (error) {
            assert.equal((error as NodeJS.ErrnoException).code, 'ENOSPC');
          } finally {
            closeSync(fd);
          }
        },
        async () => {
          rmSync(filler, { force: true });
        },
      );
      assert.ok(groupCommit.failures > failedGroups, 'commit groups failed as a whole while the disk was full');
    } finally {
      await harness?.close();
      spawnSync('umount', ['-l', dir]);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers 503 while its connection may only read (SQLITE_READONLY), and recovers once it may write', async () => {
    const harness = await startTestApp('sqlite');
    try {
      const { db } = harness.context.database;
      await throughStorageFailure(
        harness,
        async () => {
          await sql.raw('PRAGMA query_only = ON').execute(db);
        },
        async () => {
          await sql.raw('PRAGMA query_only = OFF').execute(db);
        },
      );
    } finally {
      await harness.close();
    }
  });
});
