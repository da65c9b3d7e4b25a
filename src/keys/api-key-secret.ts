import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

export const API_KEY_PREFIX = 'wo_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 44 base62 characters carry 261 bits of randomness, above the 256 we promise. */
const SECRET_LENGTH = 44;
/** Characters of the key shown in lists: `wo_` plus the first 8 of the secret. */
const VISIBLE_PREFIX_LENGTH = API_KEY_PREFIX.length + 8;
const KEY_PATTERN = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${SECRET_LENGTH}}$`);

/** A new API key value: `wo_` + 44 uniformly random base62 characters (rejection sampling, no modulo bias). */
export function generateApiKey(): string {
  let out = '';
  while (out.length < SECRET_LENGTH) {
    for (const byte of randomBytes(64)) {
      if (byte < 248 && out.length < SECRET_LENGTH) out += ALPHABET[byte % 62];
    }
  }
  return API_KEY_PREFIX + out;
}

export function isWellFormedApiKey(value: string): boolean {
  return KEY_PATTERN.test(value);
}

// Every authenticated request hashes its key: the one-shot `hash` skips the Hash object and what it costs.
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

export function visiblePrefix(key: string): string {
  return key.slice(0, VISIBLE_PREFIX_LENGTH);
}

/** Constant-time comparison of two hex digests of equal length. */
export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}
