// Processes started with keys other than the deployment's refuse to run, as real child processes;
// the test files for each database declare these cases.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { systemClock } from '../../src/clock.js';
import { ProofKeys } from '../../src/proofs/keys.js';
import { TEST_DIALECTS, type TestDialect } from '../helpers/databases.js';
import { emptyDeployment, serviceRunning, spawnWo, stopWo, type EmptyDeployment, type WoProcess } from '../helpers/child-processes.js';
import { freePort } from '../helpers/free-port.js';
import { waitFor } from '../helpers/test-app.js';

/** Runs `wo <args>` to its end: a mismatch must end it at start, whatever the command. */
async function refused(args: string[], env: Record<string, string>): Promise<{ code: number | string; stderr: string }> {
  const handle = spawnWo(args, env);
  const code = await Promise.race([handle.exited, new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 60_000))]);
  await stopWo(handle, 'SIGKILL');
  return { code, stderr: handle.stderr };
}

export function describeKeyMismatches(dialect: TestDialect): void {
  describe(`a process with other keys than the deployment's (${dialect})`, { skip: !TEST_DIALECTS.includes(dialect) && 'needs WO_TEST_DATABASE_URL' }, () => {
    let deployment: EmptyDeployment;
    let dataDir: string;
    let env: Record<string, string>;
    let first: WoProcess | undefined;

    before(async () => {
      deployment = await emptyDeployment(dialect, 'mismatch');
      ({ dataDir, env } = deployment);
      // The deployment: its first start creates the keys in <data dir>/keys and records them.
      first = spawnWo(['worker'], env);
      await waitFor(() => serviceRunning(first!), 60_000, 'the first process to run');
    });
    after(async () => {
      if (first) await stopWo(first);
      await deployment.remove();
    });

    it('exits non-zero naming WO_SECRET_KEY when started with another secret-encryption key', async () => {
      const { code, stderr } = await refused(['serve'], { ...env, PORT: String(await freePort()), WO_SECRET_KEY: randomBytes(32).toString('base64') });
      assert.equal(code, 2, stderr);
      assert.match(stderr, /WO_SECRET_KEY is not this deployment's secret-encryption key \(fingerprint \S+, recorded \S+\): set WO_SECRET_KEY to the key the other processes use/);
      assert.doesNotMatch(stderr, /WO_KEYS_DIR/, 'the signing keys are the deployment’s');
    });

    it('exits non-zero naming WO_KEYS_DIR, creating no key, when started with an empty keys directory', async () => {
      const emptyKeys = path.join(dataDir, 'empty-keys');
      const secretKeyFile = path.join(dataDir, 'keys', 'webhook-secrets.key');
      const { code, stderr } = await refused(['serve'], { ...env, PORT: String(await freePort()), WO_KEYS_DIR: emptyKeys });
      assert.equal(code, 2, stderr);
      assert.match(stderr, /WO_KEYS_DIR \(.*empty-keys\) holds no signing keys, but this deployment's are recorded: point WO_KEYS_DIR at the deployment's keys directory/);
      assert.match(stderr, /WO_SECRET_KEY is not set and .*empty-keys\/webhook-secrets.key does not exist/);
      assert.ok(existsSync(secretKeyFile));
      assert.deepEqual(existsSync(emptyKeys) ? readdirSync(emptyKeys) : [], [], 'a process that is not the first creates no keys');
    });

    it('exits non-zero naming WO_KEYS_DIR when the keys directory holds another deployment’s signing keys', async () => {
      const otherKeys = path.join(dataDir, 'other-keys');
      ProofKeys.loadOrCreate(otherKeys, 'wo.example.com/work-orders/log', systemClock);
      const { code, stderr } = await refused(['worker'], { ...env, WO_KEYS_DIR: otherKeys, WO_SECRET_KEY: randomBytes(32).toString('hex') });
      assert.equal(code, 2, stderr);
      assert.match(stderr, /WO_KEYS_DIR \(.*other-keys\) holds another transparency-log key \(\S+\) than this deployment's \(\S+\)/);
      assert.match(stderr, /other-keys\) lacks statement key \S+ of this deployment .*restart with the current keys directory/);
      assert.match(stderr, /WO_SECRET_KEY is not this deployment's/);
    });

    it('refuses a CLI command that opens the database with another secret-encryption key too', async () => {
      const { code, stderr } = await refused(['orgs', 'create', 'Acme'], { ...env, WO_SECRET_KEY: randomBytes(32).toString('base64') });
      assert.equal(code, 2, stderr);
      assert.match(stderr, /^wo: configuration error: this process's keys are not the deployment's:\n {2}WO_SECRET_KEY is not this deployment's/);
    });
  });
}
