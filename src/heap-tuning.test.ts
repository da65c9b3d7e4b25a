import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { transformSync } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { pretenuringFor } from './heap-tuning.js';

const here = path.dirname(fileURLToPath(import.meta.url));

test('pretenuring stays on for the embedded database and goes off on PostgreSQL', () => {
  assert.equal(pretenuringFor({ databaseUrl: undefined }), true);
  assert.equal(pretenuringFor({ databaseUrl: 'postgres://postgres@127.0.0.1:5432/wo' }), false);
});

/**
 * In a real V8: objects of one allocation site kept alive across many scavenges (as a request's are
 * while it waits on PostgreSQL) get the site pretenured, unless tuneHeapFor turned that off. V8's own
 * %InYoungGeneration says where the next object of the site lands.
 */
function nextObjectIsYoung(databaseUrl: string | undefined): boolean {
  const script = `
    const { tuneHeapFor } = await import('./heap-tuning.mjs');
    tuneHeapFor({ databaseUrl: ${JSON.stringify(databaseUrl ?? null)} ?? undefined });
    function make(i) { return { a: i, b: i + 1, c: [i] }; }
    const kept = [];
    for (let round = 0; round < 200; round++) {
      for (let i = 0; i < 20000; i++) kept.push(make(i));
      if (kept.length > 200000) kept.splice(0, 100000);
    }
    console.log(%InYoungGeneration(make(1)));`;
  const dir = mkdtempSync(path.join(tmpdir(), 'wo-heap-'));
  try {
    // Plain node, without tsx's loader (under which V8 pretenured nothing here): the module transpiled beside the script.
    writeFileSync(path.join(dir, 'heap-tuning.mjs'), transformSync(readFileSync(path.join(here, 'heap-tuning.ts'), 'utf8'), { loader: 'ts', format: 'esm' }).code);
    writeFileSync(path.join(dir, 'site.mjs'), script);
    const child = spawnSync(process.execPath, ['--allow-natives-syntax', path.join(dir, 'site.mjs')], { encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    return child.stdout.trim() === 'true';
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('on PostgreSQL, objects that outlive scavenges are still allocated young', () => {
  assert.equal(nextObjectIsYoung('postgres://postgres@127.0.0.1:5432/wo'), true);
});

test('on SQLite, V8 pretenures such a site as it does by default', () => {
  assert.equal(nextObjectIsYoung(undefined), false);
});
