import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { verify } from '@octokit/webhooks-methods';
import { ConfigError, loadConfig } from '../config.js';
import { SecretBox, generateWebhookSecret } from './secret-box.js';
import { signWebhookBody, verifyWebhookSignature } from './signature.js';

describe('webhook secrets and signatures', () => {
  it('seals a secret so that only the same key and row open it', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wo-keys-'));
    try {
      const box = SecretBox.fromConfig({ secretKey: undefined, keysDir: path.join(dir, 'keys') });
      const secret = generateWebhookSecret();
      const sealed = box.seal(secret, 'whk_a');
      assert.ok(!sealed.includes(secret));
      assert.equal(box.open(sealed, 'whk_a'), secret);
      assert.throws(() => box.open(sealed, 'whk_b'));
      const otherKey = SecretBox.fromConfig({ secretKey: Buffer.alloc(32, 7).toString('base64'), keysDir: dir });
      assert.throws(() => otherKey.open(sealed, 'whk_a'));
      // The key file is private to the service user and reused by the next process.
      assert.equal(statSync(path.join(dir, 'keys', 'webhook-secrets.key')).mode & 0o777, 0o600);
      assert.equal(SecretBox.fromConfig({ secretKey: undefined, keysDir: path.join(dir, 'keys') }).open(sealed, 'whk_a'), secret);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('accepts WO_SECRET_KEY only as 32 bytes in hex or base64', () => {
    assert.equal(loadConfig({ WO_SECRET_KEY: 'ab'.repeat(32) }).webhooks.secretKey, 'ab'.repeat(32));
    assert.ok(loadConfig({ WO_SECRET_KEY: Buffer.alloc(32, 1).toString('base64') }).webhooks.secretKey);
    assert.throws(() => loadConfig({ WO_SECRET_KEY: 'short' }), ConfigError);
    assert.throws(() => loadConfig({ WO_SECRET_KEY: Buffer.alloc(16).toString('base64') }), ConfigError);
  });

  it('makes whsec_ secrets of 32 random bytes in standard base64, as Standard Webhooks serializes them', () => {
    const secret = generateWebhookSecret();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(Buffer.from(secret.slice('whsec_'.length), 'base64').length, 32);
    assert.notEqual(secret, generateWebhookSecret());
  });

  it('signs as sha256=<lowercase hex HMAC>, which an independent implementation verifies', async () => {
    const secret = generateWebhookSecret();
    const body = JSON.stringify({ event: 'record.created', payload: { recordId: 'rec_1', note: 'naïve ✓' }, timestamp: '2026-01-01T00:00:00.000Z' });
    const signature = signWebhookBody(secret, body);
    assert.match(signature, /^sha256=[0-9a-f]{64}$/);
    assert.equal(await verify(secret, body, signature), true);
    assert.equal(verifyWebhookSignature(secret, body, signature), true);
    assert.equal(verifyWebhookSignature(secret, `${body} `, signature), false);
    assert.equal(verifyWebhookSignature('whsec_other', body, signature), false);
    assert.equal(verifyWebhookSignature(secret, body, signature.toUpperCase()), false);
    assert.equal(verifyWebhookSignature(secret, body, 'sha256=00'), false);
    assert.equal(verifyWebhookSignature(secret, body, undefined), false);
  });
});
