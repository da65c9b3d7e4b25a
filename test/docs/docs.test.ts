import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { ERROR_CODES } from '../../src/errors.js';
import { errorsMarkdown } from '../../src/http/errors-page.js';
import { EVENT_CATALOGUE, EVENT_TYPES } from '../../src/features.js';
import { startTestApp } from '../helpers/test-app.js';

/** The pages an integrator reads: they have the service, not its source. */
const INTEGRATOR_DOCS = ['README.md', 'CHANGELOG.md', 'docs/api.md', 'docs/compatibility.md', 'docs/rate-limits.md', 'docs/comments-and-attachments.md', 'docs/webhooks.md', 'docs/events.md', 'docs/proofs.md', 'docs/errors.md', 'docs/assets-and-locations.md', 'docs/meters.md', 'docs/people.md', 'docs/costs.md', 'docs/requests.md', 'docs/schedules.md', 'docs/admin.md', 'sdk/README.md', 'examples/erp-sync/README.md', 'examples/erp-costs/README.md', 'examples/receiver/README.md', 'examples/schedules/README.md'];

describe('reference documentation', () => {
  it('never sends an integrator into the source: no integrator page mentions src/', () => {
    const mentions = INTEGRATOR_DOCS.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, index) => (/(^|[^\w.-])src\//.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [])),
    );
    assert.deepEqual(mentions, []);
  });

  it('carries no unresolved merge: no conflict marker in any integrator page', () => {
    const markers = INTEGRATOR_DOCS.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, index) => (/^(<{7}|={7}|>{7})( |$)/.test(line) ? [`${file}:${index + 1}: ${line}`] : [])),
    );
    assert.deepEqual(markers, []);
  });

  it('docs/errors.md is the page of error codes the service serves, written from the catalogue', () => {
    assert.equal(readFileSync('docs/errors.md', 'utf8'), errorsMarkdown(), 'docs/errors.md is stale: run `npx tsx scripts/write-errors-doc.ts`');
  });

  it('docs/errors.md has a section for every code of the error catalogue, with its status, that its table links to', () => {
    const page = readFileSync('docs/errors.md', 'utf8');
    // The anchors a Markdown renderer gives headings (GitHub's rule: lower case, punctuation but - and _ dropped, spaces as -).
    const anchors = [...page.matchAll(/^#{1,6} (.+)$/gm)].map((m) => m[1]!.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-'));
    const codes = Object.keys(ERROR_CODES);
    assert.deepEqual(codes.filter((code) => !anchors.includes(code)), [], 'codes without a section');
    for (const code of codes) {
      const section = page.slice(page.indexOf(`## \`${code}\``));
      assert.match(section, new RegExp(`^## \`${code}\`\n\n${ERROR_CODES[code as keyof typeof ERROR_CODES].status} · `), code);
    }
    const linked = [...page.matchAll(/^\| \[`([a-z_]+)`\]\(#([a-z_]+)\) \| (\d{3}) \|/gm)];
    assert.deepEqual(linked.map((m) => m[1]), codes);
    for (const [, code, anchor, status] of linked) {
      assert.equal(anchor, code);
      assert.equal(Number(status), ERROR_CODES[code as keyof typeof ERROR_CODES].status, code);
    }
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

  it('docs/compatibility.md and CHANGELOG.md name every deprecated operation with the dates its answers carry', async () => {
    const t = await startTestApp('sqlite');
    try {
      type Header = { $ref?: string; schema?: { description?: string }; description?: string };
      const document = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as {
        paths: Record<string, Record<string, { operationId: string; deprecated?: boolean; responses: Record<string, { headers?: Record<string, Header> }> }>>;
        components: { headers: Record<string, Header> };
      };
      // A header shared by name is a component (#/components/headers/Deprecation).
      const resolved = (header: Header): Header => (header.$ref ? document.components.headers[header.$ref.split('/').pop()!]! : header);
      const policy = readFileSync('docs/compatibility.md', 'utf8');
      const deprecatedNow = policy.split('## Deprecated now')[1] ?? '';
      const changelog = readFileSync('CHANGELOG.md', 'utf8');
      const deprecated = Object.entries(document.paths).flatMap(([path, item]) => Object.values(item).filter((op) => op.deprecated).map((op) => ({ path, op })));
      assert.ok(deprecated.length > 0);
      for (const { path, op } of deprecated) {
        const headers = op.responses['200']!.headers!;
        const told = (name: string) => /`([^`]+)`/.exec(resolved(headers[name]!).schema?.description ?? resolved(headers[name]!).description ?? '')?.[1];
        assert.ok(deprecatedNow.includes(`\`GET ${path}\` (\`${op.operationId}\`)`), `${op.operationId} in the table of docs/compatibility.md`);
        assert.ok(deprecatedNow.includes(`Deprecation: ${told('deprecation')}`), `its Deprecation date ${told('deprecation')}`);
        assert.ok(deprecatedNow.includes(`Sunset: ${told('sunset')}`), `its Sunset date ${told('sunset')}`);
        assert.ok(changelog.includes(`(\`${op.operationId}\`)`), `${op.operationId} in CHANGELOG.md`);
      }
      const rows = [...deprecatedNow.matchAll(/^\| `GET ([^`]+)` \(`(\w+)`\)/gm)].map((m) => m[2]);
      assert.deepEqual(rows.sort(), deprecated.map(({ op }) => op.operationId).sort(), 'the table lists only operations that are deprecated');
    } finally {
      await t.close();
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
