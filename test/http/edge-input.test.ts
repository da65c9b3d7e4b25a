import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { itOnEachDatabase, recordBody, seedCategory } from '../helpers/test-app.js';

describe('edge-case input', () => {
  itOnEachDatabase('refuses JSON nested deeper than 64 levels with 400, not a crash', async ({ newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const response = await tenant.request({
      method: 'POST',
      url: '/api/v1/records',
      headers: { 'content-type': 'application/json' },
      payload: `{"categoryId":"${categoryId}","address":"a","requesterName":"b","description":"c","metadata":{"a":${deep}}}`,
    });
    assert.equal(response.statusCode, 400, response.body);
    assert.match(response.json().errors[0].message, /deeper than 64/);
    const fine = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { metadata: { a: [[[[1]]]] } }) });
    assert.equal(fine.statusCode, 201);
  });

  itOnEachDatabase('refuses a query string whose percent-escapes do not spell UTF-8, rather than read them as literal text', async ({ newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const record = (await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId) })).json() as { id: string };
    const requests = [
      { method: 'GET' as const, url: '/api/v1/assets?q=%zz' },
      { method: 'GET' as const, url: '/api/v1/records?assignee=%ff' },
      { method: 'POST' as const, url: `/api/v1/records/${record.id}/attachments?filename=%ED%A0%80.txt`, headers: { 'content-type': 'text/plain' }, payload: 'abc' },
    ];
    for (const request of requests) {
      const response = await tenant.request(request);
      assert.equal(response.statusCode, 400, `${request.url}: ${response.body}`);
      assert.equal(response.json().code, 'validation_failed');
      assert.deepEqual(response.json().errors, [{ field: 'query', message: 'is not valid percent-encoding of UTF-8' }]);
    }
    const attachments = await tenant.request({ method: 'GET', url: `/api/v1/records/${record.id}/attachments` });
    assert.equal(attachments.json().total, 0, 'no file stored');
    // Well-formed escapes, a literal "%" written as %25, and "+" still read as before.
    const fine = await tenant.request({ method: 'GET', url: '/api/v1/records?assignee=%C3%A9+a%25' });
    assert.equal(fine.statusCode, 200, fine.body);
  });

  itOnEachDatabase('refuses what no database stores as sent: lone surrogates and unsafe numbers, anywhere in the body', async ({ newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const base = `"categoryId":"${categoryId}","requesterName":"b","description":"c"`;
    // Each problem is named where it lies; a broken key, by the object holding it.
    const refused: [string, RegExp, string][] = [
      [`{${base},"address":"lone \\ud800 x"}`, /surrogate/, 'body.address'],
      [`{${base},"address":"a","metadata":{"k\\udc00":"v"}}`, /surrogate/, 'body.metadata'],
      [`{${base},"address":"a","metadata":{"s":["\\ud800"]}}`, /surrogate/, 'body.metadata.s.0'],
      [`{${base},"address":"a","metadata":{"n":9007199254740993}}`, /9007199254740991/, 'body.metadata.n'],
      [`{${base},"address":"a","metadata":{"n":-9007199254740992}}`, /9007199254740991/, 'body.metadata.n'],
      [`{${base},"address":"a","metadata":{"n":1e400}}`, /finite/, 'body.metadata.n'],
    ];
    for (const [payload, message, field] of refused) {
      const response = await tenant.request({ method: 'POST', url: '/api/v1/records', headers: { 'content-type': 'application/json' }, payload });
      assert.equal(response.statusCode, 400, `${payload}: ${response.body}`);
      assert.equal(response.json().code, 'validation_failed');
      assert.equal(response.json().errors[0].field, field);
      assert.match(response.json().errors[0].message, message);
    }
    // Paired surrogates (an emoji), the largest safe integers and fractions are stored and read back as sent.
    const metadata = { emoji: '\u{1F6B0}', max: 9007199254740991, min: -9007199254740991, fraction: 0.1, small: 5e-324 };
    const created = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { address: 'Tap \u{1F6B0}', metadata }) });
    assert.equal(created.statusCode, 201, created.body);
    const read = await tenant.request({ method: 'GET', url: `/api/v1/records/${created.json().id}` });
    assert.equal(read.json().address, 'Tap \u{1F6B0}');
    assert.deepEqual(read.json().metadata, metadata);
  });

  itOnEachDatabase('treats an empty JSON body as no body, and refuses compressed bodies with 415', async ({ newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const json = { 'content-type': 'application/json' };
    const record = (await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { assignee: 'Technician 3' }) })).json();
    const started = await tenant.request({ method: 'POST', url: `/api/v1/records/${record.id}/start`, headers: json, payload: '' });
    assert.equal(started.statusCode, 200, started.body);
    assert.equal(started.json().status, 'IN_PROGRESS');
    const missing = await tenant.request({ method: 'POST', url: '/api/v1/records', headers: json, payload: ' ' });
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json().code, 'validation_failed');
    assert.ok(missing.json().errors.some((e: { field: string }) => e.field === 'body.categoryId'), missing.body);
    const spare = (await tenant.request({ method: 'POST', url: '/api/v1/categories', payload: { name: 'Spare' } })).json();
    assert.equal((await tenant.request({ method: 'DELETE', url: `/api/v1/categories/${spare.id}`, headers: json })).statusCode, 204);

    const body = JSON.stringify(recordBody(categoryId));
    for (const [encoding, payload] of [['gzip', gzipSync(body)], ['br', Buffer.from(body)]] as const) {
      const response = await tenant.request({ method: 'POST', url: '/api/v1/records', headers: { ...json, 'content-encoding': encoding }, payload });
      assert.equal(response.statusCode, 415, `${encoding}: ${response.body}`);
      assert.equal(response.json().code, 'unsupported_media_type');
      assert.match(response.json().detail, new RegExp(`Content-Encoding "${encoding}"`));
      assert.equal(response.headers['accept-encoding'], 'identity');
    }
    const identity = await tenant.request({ method: 'POST', url: '/api/v1/records', headers: { ...json, 'content-encoding': 'identity' }, payload: body });
    assert.equal(identity.statusCode, 201, identity.body);
  });

  itOnEachDatabase('refuses instants that cannot be stored sortably: leap seconds and years beyond 0000–9999', async ({ newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    for (const instant of ['2016-12-31T23:59:60Z', '9999-12-31T23:59:59-23:59', '0000-01-01T00:00:00+01:00']) {
      const list = await tenant.request({ method: 'GET', url: `/api/v1/records?createdAfter=${encodeURIComponent(instant)}` });
      assert.equal(list.statusCode, 400, `${instant}: ${list.body}`);
      assert.equal(list.json().errors[0].field, 'querystring.createdAfter');
      const create = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { dueAt: instant }) });
      assert.equal(create.statusCode, 400, `${instant}: ${create.body}`);
    }
    const offset = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { dueAt: '2030-06-01T12:00:00+02:00' }) });
    assert.equal(offset.json().dueAt, '2030-06-01T10:00:00.000Z');
  });

  itOnEachDatabase('reads limit and offset only as plain decimal integers and refuses unknown list parameters', async ({ newTenant }) => {
    const tenant = await newTenant();
    for (const query of ['limit=0x10', 'limit=1e1', 'limit=%205', 'limit=5.0', 'offset=0x1', 'limit=1&limit=2', 'stauts=OPEN', 'offset=1e3']) {
      const response = await tenant.request({ method: 'GET', url: `/api/v1/records?${query}` });
      assert.equal(response.statusCode, 400, `${query}: ${response.body}`);
    }
    for (const collection of ['categories', 'assets', 'locations', 'webhooks']) {
      assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/${collection}?limit=0x10` })).statusCode, 400, collection);
      assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/${collection}?colour=red` })).statusCode, 400, collection);
    }
  });

  itOnEachDatabase('suggests the known field or query parameter a misspelt one most likely meant', async ({ newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const errorsOf = async (options: { method: 'GET' | 'POST' | 'PATCH'; url: string; payload?: object }) => {
      const response = await tenant.request(options);
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(response.json().code, 'validation_failed');
      return response.json().errors as { field: string; message: string }[];
    };
    assert.deepEqual(await errorsOf({ method: 'GET', url: '/api/v1/records?stauts=OPEN' }), [{ field: 'querystring.stauts', message: 'is not a known field; did you mean "status"?' }]);
    assert.deepEqual(await errorsOf({ method: 'GET', url: '/api/v1/assets?ofset=10&colour=red' }), [
      { field: 'querystring.ofset', message: 'is not a known field; did you mean "offset"?' },
      { field: 'querystring.colour', message: 'is not a known field' },
    ]);
    assert.deepEqual(await errorsOf({ method: 'POST', url: '/api/v1/records', payload: { ...recordBody(categoryId), requester_name: 'Dana', priorty: 'HIGH' } }), [
      { field: 'body.requester_name', message: 'is not a known field; did you mean "requesterName"?' },
      { field: 'body.priorty', message: 'is not a known field; did you mean "priority"?' },
    ]);
    // Inside a nested object, the names of that object.
    const schedule = { name: 'Filters', template: { categoryId, descripton: 'Replace the filters' }, triggers: [{ type: 'interval', evrey: 'P30D' }] };
    assert.deepEqual(await errorsOf({ method: 'POST', url: '/api/v1/schedules', payload: schedule }), [
      { field: 'body.template.description', message: 'is required' },
      { field: 'body.template.descripton', message: 'is not a known field; did you mean "description"?' },
      { field: 'body.triggers.0.evrey', message: 'is not a known field; did you mean "every"?' },
    ]);
  });

  itOnEachDatabase('refuses a query parameter on every route that takes none, and names it', async ({ newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const record = (await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId) })).json();
    const webhook = (
      await tenant.request({ method: 'POST', url: '/api/v1/webhooks', payload: { name: 'w', url: 'https://93.184.216.34/hook', events: ['record.created'] } })
    ).json();
    const targets: [string, string][] = [
      ['GET', `/api/v1/records/${record.id}?foo=1`],
      ['GET', `/api/v1/records/${record.id}/events?foo=1`],
      ['GET', `/api/v1/records/${record.id}/proof?foo=1`],
      ['POST', `/api/v1/records/${record.id}/cancel?foo=1`],
      ['GET', `/api/v1/categories/${categoryId}?foo=1`],
      ['GET', `/api/v1/webhooks/${webhook.id}?foo=1`],
      ['GET', `/api/v1/webhooks/${webhook.id}/deliveries?foo=1`],
      ['GET', '/api/v1/transparency/checkpoint?foo=1'],
      ['GET', '/api/v1/transparency/verifier-key?foo=1'],
      ['GET', '/api/v1/transparency/inclusion?leafIndex=0&treeSize=1&foo=1'],
    ];
    for (const [method, url] of targets) {
      const response = await tenant.request({ method: method as 'GET', url, ...(method === 'POST' ? { payload: {} } : {}) });
      assert.equal(response.statusCode, 400, `${method} ${url}: ${response.body}`);
      assert.deepEqual(response.json().errors, [{ field: 'querystring.foo', message: 'is not a known field' }], url);
    }
    // Nothing was done by the refused action.
    assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/records/${record.id}` })).json().status, 'OPEN');
  });

  itOnEachDatabase('refuses a body with content on an operation that takes none, and accepts none or {}', async ({ newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const asset = (await tenant.request({ method: 'POST', url: '/api/v1/assets', payload: { name: 'Boiler', tag: 'B-1' } })).json();
    for (const [method, url, payload] of [
      ['POST', `/api/v1/assets/${asset.id}/retire`, { bogus: 1 }],
      ['POST', `/api/v1/assets/${asset.id}/retire`, [1, 2]],
      ['DELETE', `/api/v1/categories/${categoryId}`, { force: true }],
    ] as const) {
      const response = await tenant.request({ method, url, payload });
      assert.equal(response.statusCode, 400, `${method} ${url}: ${response.body}`);
      assert.deepEqual(response.json().errors, [{ field: 'body', message: 'must be absent: this operation takes no body' }]);
    }
    // Nothing was done by the refused requests.
    assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/assets/${asset.id}` })).json().status, 'ACTIVE');
    assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/categories/${categoryId}` })).statusCode, 200);
    assert.equal((await tenant.request({ method: 'POST', url: `/api/v1/assets/${asset.id}/retire`, payload: {} })).statusCode, 200);
    assert.equal((await tenant.request({ method: 'DELETE', url: `/api/v1/categories/${categoryId}` })).statusCode, 204);
  });

  itOnEachDatabase('names the path in errors[] when the request URL itself is not valid', async ({ newTenant }) => {
    const tenant = await newTenant();
    for (const url of ['/api/v1/records/%ZZ', `/api/v1/records/rec_${'x'.repeat(5000)}`]) {
      const response = await tenant.request({ method: 'GET', url });
      assert.equal(response.statusCode, 400, url.slice(0, 40));
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
      assert.equal(response.json().code, 'validation_failed');
      assert.deepEqual(response.json().errors.map((error: { field: string }) => error.field), ['path']);
    }
  });

  itOnEachDatabase('refuses a body that is not UTF-8, and says why a __proto__ key is refused', async ({ newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const valid = Buffer.from(JSON.stringify(recordBody(categoryId, { description: 'bad XX utf8' })));
    const invalid = Buffer.from(valid.toString().replace('XX', '\u0000\u0000'));
    invalid[invalid.indexOf(0)] = 0xc3; // a lead byte followed by '(' is no UTF-8 sequence
    invalid[invalid.indexOf(0)] = 0x28;
    const response = await tenant.request({ method: 'POST', url: '/api/v1/records', headers: { 'content-type': 'application/json' }, payload: invalid });
    assert.equal(response.statusCode, 400, response.body);
    assert.equal(response.json().code, 'malformed_json');
    assert.match(response.json().detail, /UTF-8/);
    assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/records' })).json().total, 0, 'nothing stored');

    const poisoned = await tenant.request({ method: 'POST', url: '/api/v1/records', headers: { 'content-type': 'application/json' }, payload: '{"__proto__":{"admin":true}}' });
    assert.equal(poisoned.json().code, 'malformed_json');
    assert.match(poisoned.json().detail, /prototype poisoning/);
  });

  itOnEachDatabase('refuses a body that names a member twice in one object, at any depth, and stores nothing', async ({ newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const body = JSON.stringify(recordBody(categoryId, { priority: 'LOW', metadata: { unit: '4B' } }));
    const cases: [string, string][] = [
      [body.replace('"priority":"LOW"', '"priority":"LOW","priority":"URGENT"'), 'priority'],
      [body.replace('"unit":"4B"', '"unit":"4B","\\u0075nit":"5C"'), 'unit'],
    ];
    for (const [payload, name] of cases) {
      const response = await tenant.request({ method: 'POST', url: '/api/v1/records', headers: { 'content-type': 'application/json' }, payload });
      assert.equal(response.statusCode, 400, payload);
      assert.equal(response.json().code, 'malformed_json');
      assert.ok(response.json().detail.includes(`"${name}" twice`), response.json().detail);
    }
    assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/records' })).json().total, 0, 'nothing stored');
    // The same name in different objects is no repeat.
    const nested = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { metadata: { priority: 'x', nested: { priority: 'y' } } }) });
    assert.equal(nested.statusCode, 201, nested.body);
  });

  itOnEachDatabase('enforces metadata key lengths', async ({ newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    for (const metadata of [{ '': 1 }, { ['k'.repeat(41)]: 1 }]) {
      const response = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { metadata }) });
      assert.equal(response.statusCode, 400, JSON.stringify(metadata));
    }
    assert.equal((await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { metadata: { ['k'.repeat(40)]: 1 } }) })).statusCode, 201);
  });

  itOnEachDatabase('runs opposite transitions concurrently without deadlocks and keeps the counters exact', async ({ newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const id = (await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { assignee: 'Bob' }) })).json().id;
      await tenant.request({ method: 'POST', url: `/api/v1/records/${id}/start` });
      if (i % 2 === 1) await tenant.request({ method: 'POST', url: `/api/v1/records/${id}/hold` });
      ids.push(id);
    }
    // Half go IN_PROGRESS → ON_HOLD while the other half go ON_HOLD → IN_PROGRESS, all at once, twice over.
    for (let round = 0; round < 2; round++) {
      const responses = await Promise.all(
        ids.map((id, i) => tenant.request({ method: 'POST', url: `/api/v1/records/${id}/${(i + round) % 2 === 0 ? 'hold' : 'resume'}` })),
      );
      assert.deepEqual(responses.map((r) => r.statusCode), ids.map(() => 200), responses.map((r) => r.body).join('\n'));
    }
    const onHold = (await tenant.request({ method: 'GET', url: '/api/v1/records?status=ON_HOLD' })).json();
    const inProgress = (await tenant.request({ method: 'GET', url: '/api/v1/records?status=IN_PROGRESS' })).json();
    assert.equal(onHold.total, onHold.records.length);
    assert.equal(inProgress.total, inProgress.records.length);
    assert.equal(onHold.total + inProgress.total, 10);
  });
});
