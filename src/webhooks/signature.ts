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
