import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isSameRequest, requestFingerprint, streamedRequestFingerprint } from './fingerprint.js';

const request = (rawBody?: string, url = '/api/v1/records') => ({ method: 'POST', url, rawBody });

describe('request fingerprints', () => {
  it('gives a body rebuilt with another key order and spacing the same value fingerprint but another raw one', () => {
    const first = requestFingerprint(request('{"title":"Leak","priority":"high"}'));
    const rebuilt = requestFingerprint(request('{ "priority": "high", "title": "Leak" }'));
    assert.notEqual(first.raw, rebuilt.raw);
    assert.equal(first.value, rebuilt.value);
    assert.match(first.value ?? '', /^[0-9a-f]{64}$/);
  });

  it('covers method and path as well as the body', () => {
    const body = '{"name":"A"}';
    assert.notEqual(requestFingerprint(request(body)).value, requestFingerprint(request(body, '/api/v1/categories')).value);
    assert.notEqual(requestFingerprint(request(body)).raw, requestFingerprint({ ...request(body), method: 'PUT' }).raw);
  });

  it('has no value fingerprint without a body or for a body that is not I-JSON', () => {
    assert.equal(requestFingerprint(request()).value, null);
    assert.equal(requestFingerprint(request('  ')).value, null);
    assert.equal(requestFingerprint(request('{"n": 9007199254740993}')).value, null);
    assert.equal(requestFingerprint(request('not json')).value, null);
  });

  it('matches a stored claim on either fingerprint, and a claim of an earlier release on the raw one', () => {
    const fingerprint = requestFingerprint(request('{"a":1}'));
    assert.ok(isSameRequest({ fingerprint: fingerprint.raw, value_fingerprint: null }, fingerprint));
    assert.ok(isSameRequest({ fingerprint: 'other', value_fingerprint: fingerprint.value }, fingerprint));
    assert.ok(!isSameRequest({ fingerprint: 'other', value_fingerprint: null }, { raw: 'mine', value: null }), 'two missing value fingerprints are no match');
    assert.ok(!isSameRequest({ fingerprint: 'other', value_fingerprint: 'another' }, fingerprint));
  });

  it('fingerprints a streamed body by its SHA-256 and media type, never as the empty body it looks like', () => {
    const url = '/api/v1/records/rec_1/attachments?filename=a.jpg';
    const photo = streamedRequestFingerprint('POST', url, 'image/jpeg', 'ab'.repeat(32));
    assert.equal(photo.value, null);
    assert.notEqual(photo.raw, streamedRequestFingerprint('POST', url, 'image/jpeg', 'cd'.repeat(32)).raw);
    assert.notEqual(photo.raw, streamedRequestFingerprint('POST', url, 'image/png', 'ab'.repeat(32)).raw);
    assert.notEqual(photo.raw, streamedRequestFingerprint('POST', `${url}x`, 'image/jpeg', 'ab'.repeat(32)).raw);
    assert.notEqual(photo.raw, requestFingerprint({ method: 'POST', url }).raw);
  });
});
