import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createPrivateFile, replacePrivateFile } from './private-files.js';

describe('private files', () => {
  it('creates a file once: a second writer leaves the first one’s content, and no temporary file stays behind', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wo-private-'));
    try {
      const file = path.join(dir, 'nested', 'key.json');
      assert.equal(createPrivateFile(file, 'first\n'), true);
      assert.equal(createPrivateFile(file, 'second\n'), false);
      assert.equal(readFileSync(file, 'utf8'), 'first\n');
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.equal(statSync(path.dirname(file)).mode & 0o777, 0o700);
      replacePrivateFile(file, 'replaced\n');
      assert.equal(readFileSync(file, 'utf8'), 'replaced\n');
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.deepEqual(readdirSync(path.dirname(file)), ['key.json']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
