// The /metrics exposition checked against Prometheus' naming rules here, and by Prometheus' own linter,
// `promtool check metrics` (Debian package `prometheus`; .ci/run installs it), wherever it is installed:
// a user's fresh machine may not have it, and the rules it reported on are checked here either way.
import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { itOnEachDatabase, recordBody, seedCategory } from '../helpers/test-app.js';

describe('the Prometheus metrics', () => {
  itOnEachDatabase('pass promtool check metrics with no problem reported, after traffic has filled them', async (t) => {
    // Both roles, as `wo serve` runs them: the worker's metrics are in /metrics once its jobs start.
    for (const job of t.context.backgroundJobs) job.start();
    const tenant = await t.newTenant();
    const categoryId = await seedCategory(tenant);
    assert.equal((await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId) })).statusCode, 201);
    await t.app.inject({ method: 'GET', url: '/api/v1/records' });
    const exposition = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    for (const name of ['wo_http_request_duration_seconds', 'wo_event_feed_waiting_requests', 'wo_webhook_in_flight', 'wo_proof_seals_total']) {
      assert.match(exposition, new RegExp(`^# TYPE ${name} `, 'm'), name);
    }
    assert.match(exposition, /wo_http_request_duration_seconds_bucket/);
    assert.match(exposition, /^nodejs_active_handles\b/m, 'the by-type gauges stay');

    // promtool's naming rules: a counter's name ends in _total, nothing else's does; each metric has HELP and TYPE.
    const types = new Map([...exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
    const helped = new Set([...exposition.matchAll(/^# HELP (\S+) /gm)].map((m) => m[1]!));
    assert.ok(types.size > 10);
    for (const [name, type] of types) {
      assert.ok(helped.has(name), `${name} has HELP`);
      if (type === 'counter') assert.match(name, /_total$/, `counter ${name} ends in _total`);
      else assert.doesNotMatch(name, /_total$/, `${type} ${name} is not named like a counter`);
    }

    const lint = spawnSync('promtool', ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
    if ((lint.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') return;
    assert.equal(lint.error, undefined, String(lint.error));
    assert.equal(`${lint.stdout}${lint.stderr}`.trim(), '', 'promtool reports no problem');
    assert.equal(lint.status, 0);
  });
});
