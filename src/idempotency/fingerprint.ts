import { hash } from 'node:crypto';
import { canonicalJson } from '../canonical-json.js';

/**
 * What identifies a request for its Idempotency-Key. `raw` hashes method, path and the body's bytes,
 * as every release has; `value` hashes the body as a JSON value (see requestFingerprint). A stored
 * claim is the same request when either matches.
 */
export interface RequestFingerprint {
  raw: string;
  value: string | null;
}

/** The parts of a request its fingerprint covers; `rawBody` is the body's text as sent. */
export interface FingerprintedRequest {
  method: string;
  url: string;
  rawBody?: string | undefined;
}

/**
 * The request's fingerprints. `value` hashes the body as RFC 8785 canonical JSON of the value the
 * client sent (keys sorted, no whitespace, one number form), read again from the raw text because
 * validation has since filled in defaults: a retry that a client rebuilt with another key order or
 * spacing is then the same request, not a 422. Null when there is no body or it is not I-JSON
 * (validation refuses those before this runs).
 */
export function requestFingerprint(request: FingerprintedRequest): RequestFingerprint {
  const text = request.rawBody ?? '';
  const canonical = canonicalBodyOf(text);
  return {
    raw: fingerprintOf(request.method, request.url, text),
    value: canonical === undefined ? null : fingerprintOf(request.method, request.url, canonical),
  };
}

/**
 * The fingerprint of a request whose body was streamed to its handler rather than kept: the body's
 * SHA-256 and media type stand for its bytes. Known only once the body has been read, so such a
 * request claims its key then (claimAfterStreamedBody in src/http/idempotency-hooks.ts).
 */
export function streamedRequestFingerprint(method: string, url: string, mediaType: string, bodySha256: string): RequestFingerprint {
  return { raw: fingerprintOf(method, url, `${mediaType}\nsha256:${bodySha256}`), value: null };
}

/** Whether a stored claim's fingerprints name the same request as these. */
export function isSameRequest(stored: { fingerprint: string; value_fingerprint: string | null }, fingerprint: RequestFingerprint): boolean {
  return stored.fingerprint === fingerprint.raw || (stored.value_fingerprint !== null && stored.value_fingerprint === fingerprint.value);
}

function canonicalBodyOf(text: string): string | undefined {
  if (text.trim() === '') return undefined;
  try {
    return canonicalJson(JSON.parse(text));
  } catch {
    return undefined;
  }
}

function fingerprintOf(method: string, url: string, body: string): string {
  // One-shot `hash` (no Hash object): two of these run on every idempotent POST.
  return hash('sha256', `${method}\n${url}\n${body}`, 'hex');
}
