import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { ERROR_CODES } from '../../src/errors.js';
import { EVENT_CATALOGUE, EVENT_TYPES } from '../../src/features.js';

/** The pages an integrator reads: they have the service, not its source. */
const INTEGRATOR_DOCS = ['README.md', 'docs/api.md', 'docs/webhooks.md', 'docs/events.md', 'docs/proofs.md', 'docs/errors.md', 'docs/assets-and-locations.md', 'docs/meters.md', 'docs/people.md', 'docs/schedules.md', 'docs/admin.md', 'sdk/README.md', 'examples/erp-sync/README.md', 'examples/receiver/README.md', 'examples/schedules/README.md'];

describe('reference documentation', () => {
  it('never sends an integrator into the source: no integrator page mentions src/', () => {
    const mentions = INTEGRATOR_DOCS.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, index) => (/(^|[^\w.-])src\//.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [])),
    );
    assert.deepEqual(mentions, []);
  });

  it('docs/errors.md lists exactly the error codes the API can answer with, with their status', () => {
    const page = readFileSync('docs/errors.md', 'utf8');
    const documented = [...page.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1], Number(m[2])]);
    assert.deepEqual(documented.map(([code]) => code).sort(), Object.keys(ERROR_CODES).sort());
    for (const [code, status] of documented) assert.equal(ERROR_CODES[code as keyof typeof ERROR_CODES].status, status, String(code));
  });

  it('docs/events.md lists exactly the events of the catalogue, each with its payload’s top-level keys', () => {
    const page = readFileSync('docs/events.md', 'utf8');
    const rows = [...page.matchAll(/^\| `([a-z_]+\.[a-z_]+)` \|.*\| `\{(.*?)\}`/gm)];
    assert.deepEqual(rows.map((m) => m[1]).sort(), [...EVENT_TYPES].sort());
    for (const [, event, keys] of rows) {
      // Top-level keys only: drop nested `{…}` before splitting on commas.
      const documented = keys!.replace(/\{[^{}]*\}/g, '').split(',').map((key) => key.split(':')[0]!.trim());
      const schema = EVENT_CATALOGUE[event as keyof typeof EVENT_CATALOGUE].payload as { properties: Record<string, unknown> };
      assert.deepEqual(documented.sort(), Object.keys(schema.properties).sort(), event);
    }
  });

  it('docs/architecture.md names only src/ paths that exist', () => {
    const page = readFileSync('docs/architecture.md', 'utf8');
    // A path runs until a character no path here contains (a backtick, a space, a comma, a bracket);
    // a final dot or slash ends the sentence or names a folder.
    const paths = [...new Set([...page.matchAll(/\bsrc\/[\w./-]*/g)].map((m) => m[0].replace(/[./]+$/, '')))];
    assert.ok(paths.length > 50, `only ${paths.length} src/ paths found: has the page lost its map?`);
    assert.deepEqual(paths.filter((path) => !existsSync(path)), []);
  });
});
