import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { itAgainstLiveService } from './live-service.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const readme = readFileSync(path.join(root, 'sdk/README.md'), 'utf8');
// In the clone, as the README says, so that the package resolves as it does for a reader.
const workDir = path.join(root, '.tmp', `sdk-readme-${process.pid}`);
after(() => rmSync(workDir, { recursive: true, force: true }));

const quickstart = readme.split('## Quickstart')[1]!.match(/```js\n([\s\S]*?)```/)![1]!;

describe('sdk/README.md', () => {
  it('has a seven-line quickstart and never sends the reader into the service source', () => {
    assert.equal(quickstart.trim().split('\n').length, 7);
    assert.doesNotMatch(readme, /(^|[^\w.-])src\//m);
  });

  itAgainstLiveService(
    'runs the quickstart as written with a key made as the root README makes it, again after the root README made its category',
    async ({ baseUrl, tenant }) => {
      mkdirSync(workDir, { recursive: true });
      writeFileSync(path.join(workDir, 'quickstart.mjs'), quickstart);
      const run = async () => {
        const { stdout } = await promisify(execFile)(process.execPath, ['quickstart.mjs'], { cwd: workDir, env: { ...process.env, WO_URL: baseUrl, WO_KEY: tenant.key } });
        assert.match(stdout.trim(), /^rec_[0-9A-Z]{26} OPEN$/);
      };
      // The root README's quickstart creates "Plumbing" with the same key before a reader gets here.
      const made = await fetch(`${baseUrl}/api/v1/categories`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Plumbing' }),
      });
      assert.equal(made.status, 201);
      await run();
      await run();
    },
    { scopes: ['records:read', 'records:write', 'categories:read', 'categories:write'] },
  );
});
