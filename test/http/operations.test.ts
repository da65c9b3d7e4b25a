import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { itOnEachDatabase } from '../helpers/test-app.js';

describe('operational endpoints', () => {
  itOnEachDatabase('answers liveness, readiness with the database, and Prometheus metrics without a key', async ({ app, context }) => {
    assert.deepEqual((await app.inject({ method: 'GET', url: '/healthz' })).json(), { status: 'ok' });
    assert.deepEqual((await app.inject({ method: 'GET', url: '/readyz' })).json(), { status: 'ready', database: context.database.dialect });
    // The icon every browser asks for: none, and no error page for it.
    const icon = await app.inject({ method: 'GET', url: '/favicon.ico' });
    assert.equal(icon.statusCode, 204);
    assert.equal(icon.body, '');
    await app.inject({ method: 'GET', url: '/api/v1/records' });
    const metrics = await app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(metrics.statusCode, 200);
    assert.match(metrics.body, /wo_http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/records",status="401"\} 1/);
    assert.match(metrics.body, /process_resident_memory_bytes/);
    if (context.database.dialect === 'sqlite') {
      // Every write above went through group commit, and the counters say so.
      const commits = Number(/^wo_sqlite_group_commits_total (\d+)$/m.exec(metrics.body)?.[1]);
      const members = Number(/^wo_sqlite_group_members_total (\d+)$/m.exec(metrics.body)?.[1]);
      assert.ok(commits > 0 && members >= commits, `commits ${commits}, members ${members}`);
      assert.doesNotMatch(metrics.body, /wo_postgres_commit_group/);
    } else {
      assert.doesNotMatch(metrics.body, /wo_sqlite_group/);
      // The key's creation and the requests above wrote on their own or in groups, and the counters are there.
      for (const name of ['wo_postgres_commit_groups_total', 'wo_postgres_commit_group_members_total', 'wo_postgres_writes_alone_total', 'wo_postgres_commit_group_retries_total']) {
        assert.match(metrics.body, new RegExp(`^${name} \\d+$`, 'm'));
      }
    }
  });

  itOnEachDatabase('serves a valid OpenAPI 3.1 document with the bearer scheme and each operation’s scope', async ({ app }) => {
    const response = await app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    assert.equal(response.statusCode, 200);
    const document = response.json();
    assert.equal(document.openapi, '3.1.0');
    // The version of this build, as package.json gives it.
    assert.equal(document.info.version, (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version);
    const result = await new Validator().validate(document);
    assert.equal(result.valid, true, JSON.stringify(result.errors));
    assert.deepEqual(document.components.securitySchemes.bearerAuth, { ...document.components.securitySchemes.bearerAuth, type: 'http', scheme: 'bearer' });
    assert.deepEqual(document.paths['/api/v1/records'].post.security, [{ bearerAuth: ['records:write'] }]);
    assert.deepEqual(document.paths['/api/v1/records'].get.security, [{ bearerAuth: ['records:read'] }]);
    assert.ok(document.paths['/api/v1/records'].get.parameters.some((p: { name: string }) => p.name === 'limit'));
    assert.ok(document.webhooks['record.status_changed'], 'webhook payloads are documented');
  });

  itOnEachDatabase('renders the API reference at /docs from local assets', async ({ app }) => {
    const index = await app.inject({ method: 'GET', url: '/docs' });
    assert.equal(index.statusCode, 200);
    assert.match(index.body, /swagger/i);
    assert.ok(!/https?:\/\/(?!127\.0\.0\.1|localhost)[a-z0-9.-]+\/[^"']*\.(js|css)/i.test(index.body), 'no assets from the internet');
    const bundle = await app.inject({ method: 'GET', url: '/docs/static/swagger-ui-bundle.js' });
    assert.equal(bundle.statusCode, 200);
    // The page is pointed at the document clients fetch, not the plugin's own copy of it.
    assert.deepEqual((await app.inject({ method: 'GET', url: '/docs/swagger-config.json' })).json(), { url: '/api/v1/openapi.json' });
  });
});
