import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { createContext } from '../../src/context.js';

const modeOf = (file: string) => statSync(file).mode & 0o777;

describe('files on disk', () => {
  it('creates the data directory, the SQLite files (-wal and -shm too) and the keys owner-only, whatever the umask', async () => {
    const parent = mkdtempSync(path.join(tmpdir(), 'wo-modes-'));
    // With no umask at all, anything not created owner-only on purpose would come out world-readable.
    const previousUmask = process.umask(0);
    try {
      const dataDir = path.join(parent, 'data');
      const context = await createContext(loadConfig({ WO_DATA_DIR: dataDir, LOG_LEVEL: 'silent', WO_WEBHOOK_ALLOW_PRIVATE_URLS: 'true' }), { logger: pino({ level: 'silent' }), createKeys: true });
      try {
        await context.organizations.create('Modes');
        const { secret } = await context.webhooks.create((await context.organizations.list())[0]!.id, { name: 'r', url: 'http://127.0.0.1:9/hook', events: ['record.created'] });
        assert.ok(secret);
        assert.equal(modeOf(dataDir), 0o700, 'data directory');
        const sqliteFiles = readdirSync(dataDir).filter((name) => name.startsWith('wo.sqlite'));
        assert.deepEqual(sqliteFiles.sort(), ['wo.sqlite', 'wo.sqlite-shm', 'wo.sqlite-wal']);
        for (const name of sqliteFiles) assert.equal(modeOf(path.join(dataDir, name)), 0o600, name);

        const keysDir = path.join(dataDir, 'keys');
        assert.equal(modeOf(keysDir), 0o700);
        assert.equal(modeOf(path.join(keysDir, 'statement-keys')), 0o700);
        const keyFiles = readdirSync(keysDir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
        assert.equal(keyFiles.length, 3);
        for (const entry of keyFiles) assert.equal(modeOf(path.join(entry.parentPath, entry.name)), 0o600, entry.name);
      } finally {
        await context.close();
      }
    } finally {
      process.umask(previousUmask);
      rmSync(parent, { recursive: true, force: true });
    }
  });
});
