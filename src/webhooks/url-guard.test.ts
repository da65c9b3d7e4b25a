import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import dns from 'node:dns';
import { ForbiddenAddressError, checkWebhookUrl, forbiddenAddressReason, guardedLookup, literalAddressProblem } from './url-guard.js';
import { IPV4_SPECIAL_PURPOSE, IPV6_SPECIAL_PURPOSE } from './special-addresses.js';

const strict = { allowPrivateUrls: false };

/** A sample address in each entry of the IANA special-purpose registries (and the other non-unicast space), refused by that entry. */
const REFUSED_BY_BLOCK: [block: string, address: string][] = [
  ['0.0.0.0/8', '0.1.2.3'],
  ['0.0.0.0/32', '0.0.0.0'],
  ['10.0.0.0/8', '10.1.2.3'],
  ['100.64.0.0/10', '100.127.255.254'],
  ['127.0.0.0/8', '127.8.9.10'],
  ['169.254.0.0/16', '169.254.1.1'],
  ['172.16.0.0/12', '172.31.255.255'],
  ['192.0.0.0/24', '192.0.0.100'],
  ['192.0.0.0/29', '192.0.0.1'],
  ['192.0.0.8/32', '192.0.0.8'],
  ['192.0.0.9/32', '192.0.0.9'],
  ['192.0.0.10/32', '192.0.0.10'],
  ['192.0.0.170/32', '192.0.0.170'],
  ['192.0.0.171/32', '192.0.0.171'],
  ['192.0.2.0/24', '192.0.2.10'],
  ['192.31.196.0/24', '192.31.196.1'],
  ['192.52.193.0/24', '192.52.193.1'],
  ['192.88.99.0/24', '192.88.99.1'],
  ['192.88.99.2/32', '192.88.99.2'],
  ['192.168.0.0/16', '192.168.1.1'],
  ['192.175.48.0/24', '192.175.48.1'],
  ['198.18.0.0/15', '198.19.255.1'],
  ['198.51.100.0/24', '198.51.100.7'],
  ['203.0.113.0/24', '203.0.113.9'],
  ['240.0.0.0/4', '240.0.0.1'],
  ['255.255.255.255/32', '255.255.255.255'],
  ['224.0.0.0/4', '224.0.0.1'],
  ['::1/128', '::1'],
  ['::/128', '::'],
  ['64:ff9b:1::/48', '64:ff9b:1::808:808'],
  ['100::/64', '100::1'],
  ['100:0:0:1::/64', '100:0:0:1::1'],
  ['2001::/23', '2001:100::1'],
  ['2001::/32', '2001:0:4136:e378:8000:63bf:3fff:fdd2'],
  ['2001:1::1/128', '2001:1::1'],
  ['2001:1::2/128', '2001:1::2'],
  ['2001:1::3/128', '2001:1::3'],
  ['2001:2::/48', '2001:2::1'],
  ['2001:3::/32', '2001:3::1'],
  ['2001:4:112::/48', '2001:4:112::1'],
  ['2001:10::/28', '2001:10::1'],
  ['2001:20::/28', '2001:20::1'],
  ['2001:30::/28', '2001:30::1'],
  ['2001:db8::/32', '2001:db8::1'],
  ['2620:4f:8000::/48', '2620:4f:8000::53'],
  ['3fff::/20', '3fff::1'],
  ['5f00::/16', '5f00::1'],
  ['fc00::/7', 'fd12:3456::1'],
  ['fe80::/10', 'fe80::1'],
  ['::/96', '::2'],
  ['fec0::/10', 'fec0::1'],
  ['ff00::/8', 'ff02::1'],
];

/** Blocks whose addresses carry the IPv4 address they deliver to: judged by it. */
const CARRIERS_OF_IPV4: [block: string, refused: string, passes: string][] = [
  ['::ffff:0:0/96', '::ffff:10.0.0.1', '::ffff:8.8.8.8'],
  ['64:ff9b::/96', '64:ff9b::a00:1', '64:ff9b::808:808'],
  ['2002::/16', '2002:a00:1::1', '2002:808:808::1'],
];

describe('webhook URL guard', () => {
  for (const [block, address] of REFUSED_BY_BLOCK) {
    it(`refuses ${address}, in ${block}`, () => {
      assert.match(forbiddenAddressReason(address) ?? 'passed', new RegExp(`in ${block.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(`));
    });
  }

  it('has a sample for every entry of both IANA special-purpose registries', () => {
    const sampled = new Set([...REFUSED_BY_BLOCK.map(([block]) => block), ...CARRIERS_OF_IPV4.map(([block]) => block)]);
    for (const { prefix } of [...IPV4_SPECIAL_PURPOSE, ...IPV6_SPECIAL_PURPOSE]) assert.ok(sampled.has(prefix), prefix);
  });

  for (const [block, refused, passes] of CARRIERS_OF_IPV4) {
    it(`judges an address in ${block} by the IPv4 address it carries`, () => {
      assert.match(forbiddenAddressReason(refused) ?? 'passed', /of 10\.0\.0\.1, which is in 10\.0\.0\.0\/8 \(private-use\)/);
      assert.equal(forbiddenAddressReason(passes), undefined);
    });
  }

  it('refuses IPv6 outside 2000::/3, the only global unicast space, whatever the registries say', () => {
    for (const address of ['4000::1', 'e000::1', '1::1', '200::1', '8000::1', 'c000::1', 'f000::1', 'fe00::1']) {
      assert.match(forbiddenAddressReason(address) ?? 'passed', /outside 2000::\/3/, address);
    }
  });

  it('refuses IPv4-compatible addresses however they are written, without judging the IPv4 they carry', () => {
    for (const address of ['::127.0.0.1', '::10.0.0.1', '::169.254.169.254', '::8.8.8.8', '::7f00:1']) {
      assert.match(forbiddenAddressReason(address) ?? 'passed', /in ::\/96 \(deprecated IPv4-compatible\)/, address);
    }
  });

  it('accepts global unicast addresses, also IPv4-mapped, NAT64 and 6to4 forms of them', () => {
    for (const address of [
      '93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '192.0.1.1', '192.0.3.1', '198.20.0.1', '223.255.255.254',
      '2606:4700:4700::1111', '2a00:1450:4001:82b::200e', '2001:200::1', '::ffff:8.8.8.8', '64:ff9b::8.8.8.8', '2002:808:808::1',
    ]) {
      assert.equal(forbiddenAddressReason(address), undefined, `${address} should pass`);
    }
  });

  it('names the cloud metadata address when refusing it, in any form', () => {
    assert.match(forbiddenAddressReason('169.254.169.254')!, /cloud metadata/);
    for (const address of ['::ffff:169.254.169.254', '64:ff9b::a9fe:a9fe']) assert.match(forbiddenAddressReason(address)!, /169\.254\.169\.254, which is in 169\.254\.0\.0\/16/);
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
      'http://[::127.0.0.1]/', 'http://[::10.0.0.1]/', 'http://[::169.254.169.254]/', 'http://[::2]/', 'http://[4000::1]/', 'http://[e000::1]/',
      'http://[64:ff9b::127.0.0.1]/', 'http://[2002:7f00:1::1]/', 'http://[2001::1]/',
    ]) {
      const check = await checkWebhookUrl(url, strict);
      assert.equal(check.ok, false, url);
      assert.ok(literalAddressProblem(new URL(url)), `${url} is refused at delivery time too`);
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

  it('words each refusal to complete "the address …"', () => {
    assert.equal(forbiddenAddressReason('10.0.0.1'), 'is in 10.0.0.0/8 (private-use)');
    assert.equal(forbiddenAddressReason('::ffff:127.0.0.1'), 'is the IPv4-mapped form of 127.0.0.1, which is in 127.0.0.0/8 (loopback)');
    assert.equal(forbiddenAddressReason('not-an-address'), 'is not an IP address');
  });

  it('refuses localhost through the real resolver', async () => {
    assert.equal((await checkWebhookUrl('http://localhost:8080/hook', strict)).ok, false);
  });

  it('lets everything well-formed through when private URLs are allowed', async () => {
    assert.equal((await checkWebhookUrl('http://127.0.0.1:9999/hook', { allowPrivateUrls: true })).ok, true);
    assert.equal((await checkWebhookUrl('http://[::127.0.0.1]:9999/hook', { allowPrivateUrls: true })).ok, true);
    assert.equal((await checkWebhookUrl('ftp://127.0.0.1/hook', { allowPrivateUrls: true })).ok, false);
  });

  it('refuses, at connection time, a host that resolves to a private address', async () => {
    const error = await new Promise<unknown>((resolve) => guardedLookup('localhost', { all: true } as dns.LookupOptions, (err) => resolve(err)));
    assert.ok(error instanceof ForbiddenAddressError);
  });
});
