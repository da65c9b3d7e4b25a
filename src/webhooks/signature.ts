import { createHmac, timingSafeEqual } from 'node:crypto';

/** `sha256=` + lowercase hex HMAC-SHA256 of the raw body: the X-Webhook-Signature value. */
export function signWebhookBody(secret: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/**
 * What a receiver does: recompute the signature over the raw body and compare in constant time.
 * @NOTE: compares equal-length buffers with timingSafeEqual, so the time taken says nothing
 * about how many leading characters of a forged signature were right.
 */
export function verifyWebhookSignature(secret: string, body: string | Buffer, header: string | undefined): boolean {
  if (typeof header !== 'string') return false;
  const expected = Buffer.from(signWebhookBody(secret, body));
  const given = Buffer.from(header.trim());
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * The HMAC key a Standard Webhooks signature is made with: the bytes the secret's base64 part encodes
 * (the spec's `whsec_<base64>` serialization). Node's base64 decoder also reads the base64url secrets
 * issued before secrets switched to standard base64, so those sign with the same 32 bytes.
 */
export function standardWebhookKey(secret: string): Buffer {
  return Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
}

/**
 * One `webhook-signature` entry (Standard Webhooks 1.0): `v1,` + base64 HMAC-SHA256 over
 * `<webhook-id>.<webhook-timestamp>.<body>`. Signing the id and the time with the body is what lets a
 * receiver refuse a captured delivery replayed later.
 */
export function signStandardWebhook(key: Buffer, id: string, timestampSeconds: number, body: string | Buffer): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.`).update(body).digest('base64')}`;
}
