import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

describe('the wo command from the clone', () => {
  it('`npx wo --help` in the repository root runs the CLI from its sources (the package’s bin entry, no build)', { timeout: 60_000 }, async () => {
    const { stdout } = await run('npx', ['--no-install', 'wo', '--help'], { env: { ...process.env, DATABASE_URL: '' } });
    assert.match(stdout, /^usage: wo <command> \[options\]/);
    assert.match(stdout, /^ {2}listen --forward-to <url>/m);
    assert.match(stdout, /^ {2}admin create-user --email/m);
  });
});
