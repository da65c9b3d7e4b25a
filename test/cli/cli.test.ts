import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import SqliteDatabase from 'better-sqlite3';
import { waitFor } from '../helpers/test-app.js';
import { freePort } from '../helpers/free-port.js';
import { POSTGRES_URL } from '../helpers/databases.js';

const run = promisify(execFile);
const MAIN = path.resolve('src/main.ts');

function cli(dataDir: string, args: string[], input?: string) {
  const child = run(process.execPath, ['--import', 'tsx', MAIN, ...args], { env: { ...process.env, WO_DATA_DIR: dataDir, LOG_LEVEL: 'warn', DATABASE_URL: '' } });
  if (input !== undefined) {
    child.child.stdin?.end(input);
  }
  return child;
}

/** Whether `pid` still runs (a zombie, exited but not yet reaped by its new parent, counts as gone). */
function processExists(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]![0] !== 'Z';
  } catch {
    return false;
  }
}

describe('the wo CLI and the service as a user runs them', () => {
  it('creates an organization in the currency given (ISO 4217, USD by default) and refuses a code that is none', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'wo-cli-currency-'));
    try {
      assert.equal(JSON.parse((await cli(dataDir, ['orgs', 'create', 'Euro Homes', '--currency', 'eur', '--json'])).stdout).currency, 'EUR');
      assert.equal(JSON.parse((await cli(dataDir, ['orgs', 'create', 'Dollar Homes', '--json'])).stdout).currency, 'USD');
      const refused = await cli(dataDir, ['orgs', 'create', 'Doubloon Homes', '--currency', 'XYZ']).then(() => undefined, (error: { code: number; stderr: string }) => error);
      assert.ok(refused && refused.code !== 0, 'exits with an error');
      assert.match(refused.stderr, /ISO 4217/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('creates an organization and a key whose --json output is exactly {id, key, scopes, orgId}, then the quickstart works end to end', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'wo-cli-'));
    const port = await freePort();
    const server = spawn(process.execPath, ['--import', 'tsx', MAIN, 'serve'], {
      env: { ...process.env, WO_DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'info', DATABASE_URL: '', WO_SHUTDOWN_DRAIN_MS: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let logs = '';
    server.stdout.on('data', (chunk) => (logs += chunk));
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitFor(async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.ok, 20_000, 'the server to be ready');

      const org = JSON.parse((await cli(dataDir, ['orgs', 'create', 'Acme Property', '--json'])).stdout);
      assert.match(org.id, /^org_/);
      assert.equal(org.name, 'Acme Property');

      const created = JSON.parse((await cli(dataDir, ['keys', 'create', '--org', 'Acme Property', '--scopes', 'records:read,records:write,categories:write', '--name', 'erp', '--json'])).stdout);
      assert.deepEqual(Object.keys(created).sort(), ['id', 'key', 'orgId', 'scopes']);
      assert.match(created.key, /^wo_[0-9A-Za-z]{44}$/);
      assert.deepEqual(created.scopes, ['categories:write', 'records:read', 'records:write']);
      assert.equal(created.orgId, org.id);

      const headers = { authorization: `Bearer ${created.key}`, 'content-type': 'application/json' };
      const category = await (await fetch(`${base}/api/v1/categories`, { method: 'POST', headers, body: JSON.stringify({ name: 'Plumbing' }) })).json();
      const record = await fetch(`${base}/api/v1/records`, {
        method: 'POST',
        headers: { ...headers, 'idempotency-key': 'quickstart-1' },
        body: JSON.stringify({ categoryId: category.id, address: '12 Harbour Road', requesterName: 'Ann', description: 'Leak' }),
      });
      assert.equal(record.status, 201);

      const listed = JSON.parse((await cli(dataDir, ['keys', 'list', '--json'])).stdout);
      assert.equal(listed.length, 1);
      assert.equal(listed[0].id, created.id);
      assert.ok(!JSON.stringify(listed).includes(created.key.slice(11)), 'the list never shows the key');
      assert.ok(!logs.includes(created.key), 'the logs never contain the key');
      // One access-log line per request, written once it was answered.
      const accessLines = logs
        .split('\n')
        .filter((line) => line.includes('"msg":"request completed"'))
        .map((line) => JSON.parse(line) as { requestId: string; req: { method: string; url: string; remoteAddress: string }; res: { statusCode: number }; responseTime: number });
      const createLine = accessLines.find((line) => line.req.method === 'POST' && line.req.url === '/api/v1/records');
      assert.equal(createLine?.res.statusCode, 201);
      assert.equal(createLine?.req.remoteAddress, '127.0.0.1');
      assert.ok(createLine!.responseTime > 0);
      assert.equal(accessLines.filter((line) => line.requestId === createLine!.requestId).length, 1, 'one line per request');
      assert.ok(!logs.includes('incoming request'), 'no separate line on arrival');
      // A client that gives up before the answer (here: half a body, then the socket closed) leaves a line too.
      await new Promise<void>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => {
          socket.write(`POST /api/v1/categories HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${created.key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":`);
          setTimeout(() => socket.destroy(), 100);
        });
        socket.on('close', () => resolve());
        socket.on('error', reject);
      });
      await waitFor(() => logs.includes('"msg":"request aborted by the client"'), 10_000, 'the aborted request to be logged');
      const aborted = JSON.parse(logs.split('\n').find((line) => line.includes('request aborted by the client'))!) as { req: { method: string; url: string } };
      assert.deepEqual([aborted.req.method, aborted.req.url], ['POST', '/api/v1/categories']);

      await cli(dataDir, ['keys', 'revoke', created.id]);
      const afterRevoke = await fetch(`${base}/api/v1/records`, { headers });
      assert.equal(afterRevoke.status, 401);

      // What the CLI did is in the admin area's audit log, by `cli`, as docs/admin.md says.
      const file = new SqliteDatabase(path.join(dataDir, 'wo.sqlite'), { readonly: true });
      try {
        const audited = file.prepare('SELECT actor_email, action, target, org_id FROM admin_audit_log ORDER BY created_at, id').all();
        assert.deepEqual(audited, [
          { actor_email: 'cli', action: 'organization.created', target: org.id, org_id: org.id },
          { actor_email: 'cli', action: 'api_key.created', target: created.id, org_id: org.id },
          { actor_email: 'cli', action: 'api_key.revoked', target: created.id, org_id: org.id },
        ]);
      } finally {
        file.close();
      }

      server.kill('SIGTERM');
      const code = await new Promise((resolve) => server.on('exit', resolve));
      assert.equal(code, 0, 'graceful shutdown exits 0');
    } finally {
      server.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('`npm start` builds and runs the compiled service, and a SIGTERM sent to npm reaches it and shuts it down gracefully', { timeout: 180_000 }, async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'wo-start-'));
    const port = await freePort();
    // Its own process group, so that whatever happens the cleanup below reaches npm and the service.
    const npm = spawn('npm', ['start'], {
      env: { ...process.env, WO_DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'info', DATABASE_URL: '', WO_SHUTDOWN_DRAIN_MS: '500' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let logs = '';
    npm.stdout.on('data', (chunk) => (logs += chunk));
    const npmClosed = new Promise<number | null>((resolve) => npm.on('close', (code) => resolve(code)));
    let servicePid: number | undefined;
    try {
      // The build comes first: a few seconds, more on a loaded machine.
      const running = await waitFor(() => logs.split('\n').find((line) => line.includes('work-order service running')), 120_000, '`npm start` to build and serve');
      servicePid = (JSON.parse(running) as { pid: number }).pid;
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      assert.equal(ready.status, 200);
      // The process answering is node running the build, npm's own child (exec'd: no shell in between).
      const commandLine = readFileSync(`/proc/${servicePid}/cmdline`, 'utf8').split('\0');
      assert.ok(commandLine.some((part) => part.endsWith(path.join('dist', 'main.js'))), `runs dist/main.js: ${commandLine.join(' ')}`);
      assert.ok(commandLine.includes('serve'));
      assert.equal(readFileSync(`/proc/${servicePid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1], String(npm.pid), 'the service is npm’s direct child');

      npm.kill('SIGTERM');
      assert.equal(await npmClosed, 0, 'npm exits 0 once the service has shut down');
      await waitFor(() => !processExists(servicePid!), 30_000, 'the service process to exit');
      assert.match(logs, /"signal":"SIGTERM","drainMs":500,"msg":"shutting down/);
      assert.match(logs, /"signal":"SIGTERM","msg":"shut down"/);
    } finally {
      // npm cannot pass a SIGKILL on: kill the group (and the service by pid, should it have left it).
      try {
        process.kill(-npm.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
      if (servicePid !== undefined && processExists(servicePid)) process.kill(servicePid, 'SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('explains usage errors and unknown scopes with a non-zero exit and no stack trace', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'wo-cli-'));
    try {
      await cli(dataDir, ['orgs', 'create', 'Beta']);
      const unknownScope = await cli(dataDir, ['keys', 'create', '--org', 'Beta', '--scopes', 'records:delete']).then(
        () => assert.fail('should fail'),
        (error: { code: number; stderr: string }) => error,
      );
      assert.equal(unknownScope.code, 1);
      assert.match(unknownScope.stderr, /unknown scope\(s\): records:delete/);
      assert.ok(!/\n\s+at /.test(unknownScope.stderr));

      const missingOrg = await cli(dataDir, ['keys', 'create', '--scopes', 'records:read']).then(
        () => assert.fail('should fail'),
        (error: { code: number; stderr: string }) => error,
      );
      assert.equal(missingOrg.code, 2);
      assert.match(missingOrg.stderr, /--org is required/);

      const applied = await cli(dataDir, ['migrate']);
      assert.match(applied.stdout, /schema already up to date/);

      // A database a newer release migrated: on SQLite an older one refuses it, saying what to do.
      const file = new SqliteDatabase(path.join(dataDir, 'wo.sqlite'));
      try {
        file.prepare('INSERT INTO kysely_migration (name, timestamp) VALUES (?, ?)').run('9999-a-later-release', new Date().toISOString());
        const newer = await cli(dataDir, ['migrate']).then(
          () => assert.fail('should fail'),
          (error: { code: number; stderr: string }) => error,
        );
        assert.equal(newer.code, 2);
        assert.match(newer.stderr, /configuration error: The database was migrated by a newer release \(it holds 9999-a-later-release/);
        assert.ok(!/\n\s+at /.test(newer.stderr));
        file.prepare('DELETE FROM kysely_migration WHERE name = ?').run('9999-a-later-release');
      } finally {
        file.close();
      }

      // `--help` after any command shows its usage and exits 0 instead of refusing an unknown option.
      const help = await cli(dataDir, ['keys', 'create', '--help']);
      assert.match(help.stdout, /^usage: wo keys create --org <id\|name> --scopes a,b/);
      for (const scope of ['records:read', 'webhooks:manage', 'events:read']) assert.match(help.stdout, new RegExp(`^  ${scope} +\\S`, 'm'));
      assert.match((await cli(dataDir, ['serve', '-h'])).stdout, /^usage: wo serve \[--no-worker\]/);
      // After `--`, `--help` is a value: here an organization's name.
      assert.match((await cli(dataDir, ['orgs', 'create', '--json', '--', '--help'])).stdout, /"name":"--help"/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('says in one line why the database failed a process at start: unreachable exits 1, a refused role or database 2', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'wo-cli-'));
    try {
      const started = (databaseUrl: string) =>
        run(process.execPath, ['--import', 'tsx', MAIN, 'serve', '--no-worker'], { env: { ...process.env, WO_DATA_DIR: dataDir, LOG_LEVEL: 'warn', DATABASE_URL: databaseUrl, PORT: '0' } }).then(
          () => assert.fail('should not start'),
          (error: { code: number; stderr: string }) => error,
        );
      const nothingListens = await freePort();
      const unreachable = await started(`postgres://postgres@127.0.0.1:${nothingListens}/wo`);
      assert.equal(unreachable.code, 1);
      assert.equal(unreachable.stderr.trim(), `wo: The database cannot be reached: connect ECONNREFUSED 127.0.0.1:${nothingListens}. Check DATABASE_URL and that the database is running; a process manager that restarts this process retries.`);
      if (POSTGRES_URL) {
        const noSuchDatabase = new URL(POSTGRES_URL);
        noSuchDatabase.pathname = '/wo_no_such_database';
        const refused = await started(noSuchDatabase.href);
        assert.equal(refused.code, 2);
        assert.equal(refused.stderr.trim(), 'wo: configuration error: DATABASE_URL: database "wo_no_such_database" does not exist');
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
