import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { adminCreateUserCommand } from '../../src/cli/admin-commands.js';
import { UsageError, type CliIo } from '../../src/cli/command.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createContext } from '../../src/context.js';
import { AppError } from '../../src/errors.js';
import { pino } from 'pino';

/** Runs `wo admin create-user` with `stdin` piped in; returns what it printed. */
async function createUser(config: Config, args: string[], stdin: string) {
  const out: string[] = [];
  const io: CliIo = { out: (text) => out.push(text), err: (text) => out.push(text), readStdin: async () => stdin };
  const code = await adminCreateUserCommand.run(args, config, io);
  return { code, out };
}

describe('wo admin create-user', () => {
  let dataDir: string;
  let config: Config;
  before(() => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'wo-admin-cli-'));
    config = loadConfig({ WO_DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('reads the password from stdin, and the new administrator can sign in with it', async () => {
    const { code, out } = await createUser(config, ['--email', 'Cli@Example.com', '--json'], 'a passphrase from stdin\n');
    assert.equal(code, 0);
    const user = JSON.parse(out[0]!) as { id: string; email: string };
    assert.equal(user.email, 'cli@example.com');
    assert.match(user.id, /^usr_/);

    const context = await createContext(config, { logger: pino({ level: 'silent' }) });
    try {
      const { session } = await context.admin.signIn('cli@example.com', 'a passphrase from stdin', '127.0.0.1');
      assert.equal(session.userId, user.id);
      const { entries } = await context.admin.listAudit(undefined, { limit: 10, offset: 0 });
      assert.ok(entries.some((e) => e.action === 'admin_user.created' && e.actorEmail === 'cli' && e.target === user.id));
      assert.equal(await context.admin.issueSetupTokenIfNoUsers(), undefined, 'no setup link once an administrator exists');
    } finally {
      await context.close();
    }
  });

  it('refuses a missing email, an empty stdin, a short password and a duplicate', async () => {
    await assert.rejects(createUser(config, [], 'long enough password'), UsageError);
    await assert.rejects(createUser(config, ['--email', 'x@example.com'], ''), UsageError);
    await assert.rejects(createUser(config, ['--email', 'x@example.com'], 'short\n'), (error: AppError) => error.code === 'validation_failed');
    await assert.rejects(createUser(config, ['--email', 'cli@example.com'], 'another long password'), (error: AppError) => error.code === 'already_exists');
  });
});
