// The /metrics exposition checked by Prometheus' own linter, `promtool check metrics` (Debian package
// `prometheus`; .ci/run installs it). A missing promtool fails the test: it is not skipped.
import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { itOnEachDatabase, recordBody, seedCategory } from '../helpers/test-app.js';

describe('the Prometheus metrics', () => {
  itOnEachDatabase('pass promtool check metrics with no problem reported, after traffic has filled them', async (t) => {
    const tenant = await t.newTenant();
    const categoryId = await seedCategory(tenant);
    assert.equal((await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId) })).statusCode, 201);
    await t.app.inject({ method: 'GET', url: '/api/v1/records' });
    const exposition = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(exposition, /wo_http_request_duration_seconds_bucket/);
    assert.match(exposition, /^nodejs_active_handles\b/m, 'the by-type gauges stay');

    const lint = spawnSync('promtool', ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
    assert.equal(lint.error, undefined, `promtool could not run (apt-get install prometheus): ${String(lint.error)}`);
    assert.equal(`${lint.stdout}${lint.stderr}`.trim(), '', 'promtool reports no problem');
    assert.equal(lint.status, 0);
  });
});
