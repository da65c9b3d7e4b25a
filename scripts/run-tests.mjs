#!/usr/bin/env node
// Runs every *.test.ts under src/ and test/ with Node's own test runner (Node 20 does not expand globs).
// Pass file paths or substrings to run a subset: `npm test -- records`.
// The SDK's and the examples' tests use the built SDK (sdk/dist): it is built first when they run.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

function collect(dir) {
  let out = [];
  for (const entry of readdirSync(dir)) {
    const full = path.join(dir, entry);
    if (entry === 'node_modules' || entry === 'dist') continue;
    if (statSync(full).isDirectory()) out = out.concat(collect(full));
    else if (entry.endsWith('.test.ts')) out.push(full);
  }
  return out;
}

const filters = process.argv.slice(2);
let files = ['src', 'test', 'sdk/test', 'examples'].flatMap((d) => collect(d)).sort();
if (filters.length) files = files.filter((f) => filters.some((x) => f.includes(x)));
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}

if (files.some((f) => f.startsWith('sdk/') || f.startsWith('examples/'))) {
  const build = spawnSync('npm', ['run', '--silent', 'build', '--workspace', 'sdk'], { stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

if (!process.env.WO_TEST_DATABASE_URL) {
  console.log('# PostgreSQL suite SKIPPED: WO_TEST_DATABASE_URL is not set, so the HTTP suites run on SQLite only.');
  console.log('#   Run them on PostgreSQL too: WO_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test');
} else {
  console.log(`# HTTP suites run on SQLite and on PostgreSQL (${process.env.WO_TEST_DATABASE_URL.replace(/\/\/[^@]*@/, '//…@')})`);
}

const result = spawnSync(
  process.execPath,
  // A file's deadline: the witnessed-log file (12 multi-process cases on both databases) took over 300 s on a loaded 2-core machine.
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=600000', ...files],
  { stdio: 'inherit', env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' } },
);
process.exit(result.status ?? 1);
