// Four processes starting at once on an empty database and an empty keys directory, as real child
// processes; the test files for each database run rounds of it.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import type { TestDialect } from '../helpers/databases.js';
import { emptyDeployment, serviceRunning, spawnWo, stopWo, type WoProcess } from '../helpers/child-processes.js';
import { freePort } from '../helpers/free-port.js';
import { waitFor } from '../helpers/test-app.js';

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}

/**
 * Starts two `serve --no-worker` and two `worker` processes at once on a new, empty database (on
 * SQLite: migrated, see below) and keys directory; checks that all four run, with one key of each
 * kind created and recorded.
 */
export async function startFourAtOnce(dialect: TestDialect, round: number): Promise<void> {
  const deployment = await emptyDeployment(dialect, 'first-start');
  const { dataDir, env, databaseUrl } = deployment;
  const processes: WoProcess[] = [];
  try {
    if (dialect === 'sqlite') {
      // Kysely takes no lock around SQLite migrations, so processes migrating one new file at once
      // collide ("table … already exists"): the schema is made first here, the keys still are not.
      const sqlite = openDatabase({ sqlitePath: path.join(dataDir, 'wo.sqlite') });
      await migrateToLatest(sqlite);
      await sqlite.close();
    }
    const ports = [await freePort(), await freePort()];
    processes.push(
      spawnWo(['serve', '--no-worker'], { ...env, PORT: String(ports[0]) }),
      spawnWo(['serve', '--no-worker'], { ...env, PORT: String(ports[1]) }),
      spawnWo(['worker'], env),
      spawnWo(['worker'], env),
    );
    await waitFor(() => processes.every(serviceRunning), 90_000, `round ${round}: all four processes to run`).catch((error: Error) => {
      throw new Error(`${error.message}\n${processes.map((p) => `--- ${p.child.spawnargs.slice(4).join(' ')}\n${p.stdout.slice(-600)}${p.stderr.slice(-600)}`).join('\n')}`);
    });

    const keysDir = path.join(dataDir, 'keys');
    const files = filesUnder(keysDir);
    assert.equal(files.filter((f) => f.startsWith('statement-keys/')).length, 1, `round ${round}: ${files.join(', ')}`);
    assert.deepEqual(files.filter((f) => !f.startsWith('statement-keys/')), ['log-ed25519.json', 'webhook-secrets.key'], `round ${round}`);
    assert.ok(files.every((f) => !f.endsWith('.tmp')), 'no temporary file is left behind');
    for (const p of processes) assert.doesNotMatch(p.stderr + p.stdout, /KeyFileError|Unexpected end of JSON/);

    const check = openDatabase(databaseUrl ? { url: databaseUrl } : { sqlitePath: path.join(dataDir, 'wo.sqlite') });
    try {
      const recorded = await check.db.selectFrom('deployment_keys').select(['kind', 'log_origin']).orderBy('kind').execute();
      assert.deepEqual(recorded, [
        { kind: 'secret-encryption', log_origin: null },
        { kind: 'statement', log_origin: null },
        { kind: 'transparency-log', log_origin: 'wo.example.com/work-orders/log' },
      ]);
    } finally {
      await check.close();
    }
    // Both APIs publish the same keys.
    const jwks = await Promise.all(ports.map(async (port) => (await fetch(`http://127.0.0.1:${port}/.well-known/jwks.json`)).json()));
    assert.deepEqual(jwks[0], jwks[1]);
  } finally {
    await Promise.all(processes.map((p) => stopWo(p, 'SIGKILL')));
    await deployment.remove();
  }
}
