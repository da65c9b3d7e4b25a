import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino, type Logger } from 'pino';
import type { CliIo } from '../../src/cli/command.js';
import { orgsCreateCommand } from '../../src/cli/org-commands.js';
import { proofRotateKeyCommand } from '../../src/cli/proof-commands.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createContext, type AppContext } from '../../src/context.js';
import { DeploymentKeysError } from '../../src/deployment/deployment-keys.js';
import { readPublishedKeys, rotateStatementKey } from '../../src/proofs/keys.js';
import { TEST_DIALECTS, createPostgresDatabase } from '../helpers/databases.js';


function captureIo(): CliIo & { lines: string[] } {
  const lines: string[] = [];
  return { lines, out: (text) => lines.push(text), err: (text) => lines.push(text), readStdin: async () => '' };
}

/** A logger whose warnings the test reads. */
function warningsLogger(): { logger: Logger; warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, logger: pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line).msg as string) }) };
}

function statementKids(keysDir: string): string[] {
  return readPublishedKeys(keysDir)
    .keys.filter((key) => key['x-wo-role'] === 'statement')
    .map((key) => key.kid)
    .sort();
}

for (const dialect of TEST_DIALECTS) {
  describe(`the deployment's recorded keys (${dialect})`, () => {
    let dataDir: string;
    let database: { url: string; drop: () => Promise<void> } | undefined;
    const opened: AppContext[] = [];
    const configWith = (env: Record<string, string> = {}): Config =>
      loadConfig({ WO_DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...(database ? { DATABASE_URL: database.url } : {}), ...env });
    const open = async (config: Config, options: { createKeys?: boolean; logger?: Logger } = {}) => {
      const context = await createContext(config, { logger: options.logger ?? pino({ level: 'silent' }), createKeys: options.createKeys ?? false });
      opened.push(context);
      return context;
    };
    const recorded = async (context: AppContext) =>
      context.database.db.selectFrom('deployment_keys').select(['kind', 'fingerprint', 'log_origin']).orderBy('kind').orderBy('fingerprint').execute();

    beforeEach(async () => {
      dataDir = mkdtempSync(path.join(tmpdir(), 'wo-deployment-keys-'));
      database = dialect === 'postgres' ? await createPostgresDatabase('wo_dkeys') : undefined;
    });
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((context) => context.close()));
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    });
    it('warns at a service start when the keys directory is open to other users, and not when it is 0700', async () => {
      const keysDir = path.join(dataDir, 'shared-keys');
      mkdirSync(keysDir, { mode: 0o755 });
      chmodSync(keysDir, 0o755); // whatever the umask
      const open755 = warningsLogger();
      await open(configWith({ WO_KEYS_DIR: keysDir }), { createKeys: true, logger: open755.logger });
      assert.deepEqual(open755.warnings, [`the keys directory ${keysDir} is open to other users (mode 0755): \`chmod 700\` it, as the service would have created it`]);
      chmodSync(keysDir, 0o700);
      const closed = warningsLogger();
      await open(configWith({ WO_KEYS_DIR: keysDir }), { createKeys: true, logger: closed.logger });
      assert.deepEqual(closed.warnings, []);
    });

    it('creates no key when a command runs first, and the first service start names the log after WO_PUBLIC_URL for good', async () => {
      const io = captureIo();
      // WO_PUBLIC_URL is not set yet when the operator creates the first organization.
      const exitCode = await orgsCreateCommand.run(['Acme'], configWith(), io);
      assert.equal(exitCode, 0, io.lines.join('\n'));
      const keysDir = path.join(dataDir, 'keys');
      assert.deepEqual(existsSync(keysDir) ? readdirSync(keysDir) : [], [], 'no key file, so no origin fixed');

      const first = await open(configWith({ WO_PUBLIC_URL: 'https://wo.example.com' }), { createKeys: true });
      assert.equal(first.transparencyLog.origin, 'wo.example.com/work-orders/log');
      const log = readPublishedKeys(keysDir).keys.find((key) => key['x-wo-role'] === 'transparency-log');
      assert.equal(log?.['x-wo-log-origin'], 'wo.example.com/work-orders/log');
      assert.deepEqual(
        (await recorded(first)).map((key) => [key.kind, key.log_origin]),
        [
          ['secret-encryption', null],
          ['statement', null],
          ['transparency-log', 'wo.example.com/work-orders/log'],
        ],
      );
      assert.ok((await recorded(first)).every((key) => /^[A-Za-z0-9_-]{43}$/.test(key.fingerprint)), 'fingerprints are SHA-256 digests, never key material');

      // A later start with another public URL keeps the log's name and says so.
      const { logger, warnings } = warningsLogger();
      const later = await open(configWith({ WO_PUBLIC_URL: 'https://work-orders.example.net' }), { createKeys: true, logger });
      assert.equal(later.transparencyLog.origin, 'wo.example.com/work-orders/log');
      assert.equal(warnings.length, 1, warnings.join('\n'));
      assert.match(warnings[0]!, /names the transparency log "work-orders.example.net\/work-orders\/log", but it was named "wo.example.com\/work-orders\/log" at its first start: keeping "wo.example.com\/work-orders\/log"/);
    });

    it('adds a rotated statement key to the record, refuses an older copy of the keys directory and accepts a newer one', async () => {
      const config = configWith({ WO_PUBLIC_URL: 'https://wo.example.com' });
      const first = await open(config, { createKeys: true });
      const [initial] = statementKids(config.keysDir);
      const olderCopy = path.join(dataDir, 'keys-before-rotation');
      cpSync(config.keysDir, olderCopy, { recursive: true });

      const io = captureIo();
      assert.equal(await proofRotateKeyCommand.run([], config, io), 0, io.lines.join('\n'));
      const rotated = statementKids(config.keysDir);
      assert.equal(rotated.length, 2);
      const recordedStatements = async () => (await recorded(first)).filter((key) => key.kind === 'statement').map((key) => key.fingerprint).sort();
      assert.deepEqual(await recordedStatements(), rotated);

      await assert.rejects(open(configWith({ WO_KEYS_DIR: olderCopy })), (error: Error) => {
        assert.ok(error instanceof DeploymentKeysError);
        const added = rotated.find((kid) => kid !== initial)!;
        assert.match(error.message, new RegExp(`WO_KEYS_DIR \\(.*keys-before-rotation\\) lacks statement key ${added} of this deployment .*: restart with the current keys directory`));
        return true;
      });

      // Rotated without the database (an offline copy of the tooling): a newer set, accepted, and recorded by the next service start.
      const { kid: offline } = rotateStatementKey(config.keysDir, { now: () => new Date(Date.now() + 60_000) });
      await open(config);
      assert.ok(!(await recordedStatements()).includes(offline), 'a command only checks');
      await open(config, { createKeys: true });
      assert.deepEqual(await recordedStatements(), statementKids(config.keysDir));
    });

    it('takes a new secret-encryption key once the operator deletes the lost one’s record, as documented', async () => {
      const config = configWith();
      const first = await open(config, { createKeys: true });
      const [before] = (await recorded(first)).filter((key) => key.kind === 'secret-encryption');
      rmSync(path.join(config.keysDir, 'webhook-secrets.key'));
      await assert.rejects(open(config, { createKeys: true }), /WO_SECRET_KEY is not set and .*webhook-secrets.key does not exist/);
      await first.database.db.deleteFrom('deployment_keys').where('kind', '=', 'secret-encryption').execute();
      await open(config, { createKeys: true });
      const [after] = (await recorded(first)).filter((key) => key.kind === 'secret-encryption');
      assert.ok(after && after.fingerprint !== before!.fingerprint);
      assert.ok(existsSync(path.join(config.keysDir, 'webhook-secrets.key')));
    });

    it('lets a command work before the first start without creating keys, and tells what is missing if it needs them', async () => {
      const context = await open(configWith());
      const org = await context.organizations.create('Before the first start');
      assert.match(org.id, /^org_/);
      assert.throws(() => context.proofs.verifierKey, /no proof signing keys in .* yet: the first `wo serve` or `wo worker` start creates them/);
      const io = captureIo();
      await assert.rejects(proofRotateKeyCommand.run([], configWith(), io), /WO_KEYS_DIR \(.*\) holds no signing keys yet/);
    });
  });
}
