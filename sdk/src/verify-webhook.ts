import type { WebhookEnvelope } from './operation-types.js';

/** A delivery's headers: a fetch `Headers`, or Node's `request.headers`. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

/** A verified delivery: its envelope `{event, payload, timestamp}` and `id`, the event id to deduplicate on. */
export type VerifiedWebhook = WebhookEnvelope & { id: string };

export type WebhookVerificationReason = 'missing_signature' | 'bad_signature' | 'timestamp_out_of_range' | 'malformed';

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(
    readonly reason: WebhookVerificationReason,
    message: string,
  ) {
    super(message);
  }
}

export interface VerifyWebhookOptions {
  /** How far `webhook-timestamp` may be from now, in seconds (default 300, as the Standard Webhooks libraries). */
  toleranceSeconds?: number;
  /** The receiver's clock, in milliseconds since 1970 (default Date.now). */
  now?: () => number;
}

/**
 * Verifies a webhook delivery from its raw body (as received, before any JSON parsing) and answers
 * its parsed envelope; throws WebhookVerificationError otherwise. `secret` is the subscription's
 * `whsec_…` secret, or several during a rotation (`[newSecret, oldSecret]`).
 *
 * Both signatures the service sends are accepted. The Standard Webhooks one (`webhook-signature`,
 * which also signs the id and the time of sending) is checked whenever it is present, and then must
 * hold, with a timestamp within the tolerance, so a captured delivery cannot be replayed later by
 * stripping it; the contract's `X-Webhook-Signature` (and `-Previous`) is checked when it is absent.
 */
export async function verifyWebhook(rawBody: string | Uint8Array, headers: WebhookHeaders, secret: string | readonly string[], options: VerifyWebhookOptions = {}): Promise<VerifiedWebhook> {
  const secrets = typeof secret === 'string' ? [secret] : [...secret];
  if (secrets.length === 0) throw new TypeError('verifyWebhook needs at least one secret');
  const body = typeof rawBody === 'string' ? new TextEncoder().encode(rawBody) : rawBody;
  const header = (name: string) => readHeader(headers, name);

  const standardSignature = header('webhook-signature');
  const contractSignatures = [header('x-webhook-signature'), header('x-webhook-signature-previous')].filter((value) => value !== undefined);
  let id: string | undefined;
  if (standardSignature !== undefined) {
    id = header('webhook-id');
    const timestamp = header('webhook-timestamp');
    if (id === undefined || timestamp === undefined || !/^\d+$/.test(timestamp)) throw new WebhookVerificationError('malformed', 'webhook-id or webhook-timestamp is missing or malformed');
    const skew = Math.abs((options.now ?? Date.now)() / 1000 - Number(timestamp));
    if (skew > (options.toleranceSeconds ?? 300)) throw new WebhookVerificationError('timestamp_out_of_range', `webhook-timestamp is ${Math.round(skew)} s away from now`);
    const signed = concat(new TextEncoder().encode(`${id}.${timestamp}.`), body);
    const given = standardSignature
      .split(' ')
      .filter((entry) => entry.startsWith('v1,'))
      .map((entry) => fromBase64(entry.slice(3)))
      .filter((bytes) => bytes !== undefined);
    if (!(await anyHmacMatches(secrets.map(standardKey), signed, given))) throw new WebhookVerificationError('bad_signature', 'webhook-signature does not match the secret');
  } else if (contractSignatures.length > 0) {
    id = header('x-webhook-id');
    const given = contractSignatures.map((value) => (/^sha256=[0-9a-f]{64}$/.test(value) ? fromHex(value.slice(7)) : undefined)).filter((bytes) => bytes !== undefined);
    const keys = secrets.map((value) => new TextEncoder().encode(value));
    if (!(await anyHmacMatches(keys, body, given))) throw new WebhookVerificationError('bad_signature', 'X-Webhook-Signature does not match the secret');
    if (id === undefined) throw new WebhookVerificationError('malformed', 'X-Webhook-Id is missing');
  } else {
    throw new WebhookVerificationError('missing_signature', 'the request carries neither webhook-signature nor X-Webhook-Signature');
  }

  let envelope: WebhookEnvelope;
  try {
    envelope = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body)) as WebhookEnvelope;
  } catch {
    throw new WebhookVerificationError('malformed', 'the signed body is not JSON');
  }
  return { ...envelope, id };
}

function readHeader(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}

/** The Standard Webhooks key: the bytes the secret's base64 encodes (base64url in secrets issued before it). */
function standardKey(secret: string): Uint8Array {
  const key = fromBase64(secret.replace(/^whsec_/, '').replace(/-/g, '+').replace(/_/g, '/'));
  if (!key) throw new TypeError('the webhook secret is not whsec_ followed by base64');
  return key;
}

/** Constant-time comparisons through WebCrypto's HMAC verify. */
async function anyHmacMatches(keys: Uint8Array[], data: Uint8Array, signatures: Uint8Array[]): Promise<boolean> {
  for (const keyBytes of keys) {
    const key = await globalThis.crypto.subtle.importKey('raw', keyBytes as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
    for (const signature of signatures) {
      if (await globalThis.crypto.subtle.verify('HMAC', key, signature as Uint8Array<ArrayBuffer>, data as Uint8Array<ArrayBuffer>)) return true;
    }
  }
  return false;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

function fromBase64(text: string): Uint8Array | undefined {
  try {
    return Uint8Array.from(atob(text.padEnd(Math.ceil(text.length / 4) * 4, '=')), (char) => char.charCodeAt(0));
  } catch {
    return undefined;
  }
}

function fromHex(hex: string): Uint8Array {
  return Uint8Array.from(hex.match(/../g)!, (pair) => parseInt(pair, 16));
}
