import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { FEATURE_REGISTRY } from '../../src/features.js';

// Each scope's help, read against the operations that require it (sdk/openapi.json is the served
// document, checked current by `npm run openapi:check`).
const document = JSON.parse(readFileSync('sdk/openapi.json', 'utf8')) as { paths: Record<string, Record<string, { security?: { bearerAuth?: string[] }[] }>> };
const required = new Map<string, string[]>();
for (const [path, item] of Object.entries(document.paths)) {
  for (const [method, operation] of Object.entries(item)) {
    for (const scope of (operation.security ?? []).flatMap((entry) => entry.bearerAuth ?? [])) required.set(scope, [...(required.get(scope) ?? []), `${method.toUpperCase()} ${path}`]);
  }
}

describe('the scopes’ help, audited against the routes', () => {
  it('gives every scope at least one operation that requires it, and requires no scope the catalogue lacks', () => {
    assert.deepEqual(FEATURE_REGISTRY.scopes.all.filter((scope) => !required.has(scope)), []);
    assert.deepEqual([...required.keys()].filter((scope) => !FEATURE_REGISTRY.scopes.has(scope)), []);
  });

  it('never claims an operation needs a second scope: each operation requires exactly one', () => {
    for (const [scope, description] of Object.entries(FEATURE_REGISTRY.scopes.descriptions)) {
      assert.doesNotMatch(description, /also (needs|requires)/, `${scope}: ${description}`);
    }
    for (const item of Object.values(document.paths)) {
      for (const operation of Object.values(item)) for (const entry of operation.security ?? []) assert.ok((entry.bearerAuth ?? []).length <= 1);
    }
  });
});
