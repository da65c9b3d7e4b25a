import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import dns from 'node:dns';
import { ForbiddenAddressError, checkWebhookUrl, forbiddenAddressReason, guardedLookup } from './url-guard.js';

const strict = { allowPrivateUrls: false };

describe('webhook URL guard', () => {
  it('refuses loopback, private, link-local, metadata, CGNAT, multicast, unspecified and reserved addresses', () => {
    for (const address of [
      '127.0.0.1', '127.8.9.10', '::1', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', 'fc00::1', 'fd12:3456::1',
      '169.254.169.254', '169.254.1.1', 'fe80::1', '100.64.0.1', '100.127.255.254', '224.0.0.1', 'ff02::1',
      '0.0.0.0', '0.1.2.3', '::', '255.255.255.255', '240.0.0.1', '192.0.2.10', '2001:db8::1',
      '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '64:ff9b::7f00:1',
    ]) {
      assert.ok(forbiddenAddressReason(address), `${address} should be refused`);
    }
  });

  it('accepts global unicast addresses, also IPv4-mapped ones', () => {
    for (const address of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      assert.equal(forbiddenAddressReason(address), undefined, `${address} should pass`);
    }
  });

  it('names the cloud metadata address when refusing it', () => {
    assert.match(forbiddenAddressReason('169.254.169.254')!, /metadata/);
  });

  it('accepts only absolute http and https URLs without credentials', async () => {
    for (const url of ['ftp://93.184.216.34/x', 'file:///etc/passwd', '/relative/path', 'not a url', 'javascript:alert(1)', 'http://user:pw@93.184.216.34/']) {
      const check = await checkWebhookUrl(url, strict);
      assert.equal(check.ok, false, url);
    }
    assert.equal((await checkWebhookUrl('https://93.184.216.34/hooks', strict)).ok, true);
    assert.equal((await checkWebhookUrl('http://93.184.216.34:8080/hooks', strict)).ok, true);
  });

  it('refuses IP literals in every spelling that points at a private address', async () => {
    for (const url of [
      'http://127.0.0.1/', 'http://0x7f.1/', 'http://2130706433/', 'http://017700000001/', 'http://[::1]/', 'http://[::ffff:127.0.0.1]/',
      'http://169.254.169.254/latest/meta-data/', 'http://10.0.0.1:8080/', 'http://0.0.0.0/', 'http://[fe80::1]/',
    ]) {
      const check = await checkWebhookUrl(url, strict);
      assert.equal(check.ok, false, url);
    }
  });

  it('refuses a host name when any of its addresses is private', async () => {
    const resolve = async (host: string) => ({ 'mixed.example': ['93.184.216.34', '10.0.0.7'], 'public.example': ['93.184.216.34'], 'inside.example': ['192.168.0.2'] })[host] ?? [];
    assert.equal((await checkWebhookUrl('https://public.example/hook', { ...strict, resolve })).ok, true);
    const mixed = await checkWebhookUrl('https://mixed.example/hook', { ...strict, resolve });
    assert.equal(mixed.ok, false);
    assert.match((mixed as { reason: string }).reason, /10\.0\.0\.7/);
    assert.equal((await checkWebhookUrl('https://inside.example/hook', { ...strict, resolve })).ok, false);
    assert.equal((await checkWebhookUrl('https://nothing.example/hook', { ...strict, resolve })).ok, false);
  });

  it('refuses a host name that does not resolve', async () => {
    const check = await checkWebhookUrl('https://no-such-host.invalid/hook', {
      ...strict,
      resolve: async () => {
        throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
      },
    });
    assert.equal(check.ok, false);
    // Reasons complete "The webhook URL is not allowed: it …".
    assert.equal((check as { reason: string }).reason, 'names host "no-such-host.invalid", which does not resolve');
  });

  it('words each refusal with the right article', () => {
    assert.equal(forbiddenAddressReason('0.0.0.0'), 'is an unspecified address');
    assert.equal(forbiddenAddressReason('10.0.0.1'), 'is a private address');
  });

  it('refuses localhost through the real resolver', async () => {
    assert.equal((await checkWebhookUrl('http://localhost:8080/hook', strict)).ok, false);
  });

  it('lets everything well-formed through when private URLs are allowed', async () => {
    assert.equal((await checkWebhookUrl('http://127.0.0.1:9999/hook', { allowPrivateUrls: true })).ok, true);
    assert.equal((await checkWebhookUrl('ftp://127.0.0.1/hook', { allowPrivateUrls: true })).ok, false);
  });

  it('refuses, at connection time, a host that resolves to a private address', async () => {
    const error = await new Promise<unknown>((resolve) => guardedLookup('localhost', { all: true } as dns.LookupOptions, (err) => resolve(err)));
    assert.ok(error instanceof ForbiddenAddressError);
  });
});
