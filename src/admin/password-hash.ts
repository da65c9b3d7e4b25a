import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * scrypt password hashing from node:crypto. Each hash is a PHC-style string carrying its own
 * parameters and salt, `$scrypt$ln=15,r=8,p=1$<salt>$<hash>` (unpadded base64), so the cost can
 * be raised later without invalidating stored hashes.
 */
export interface ScryptParameters {
  /** log2 of the CPU/memory cost N. */
  ln: number;
  r: number;
  p: number;
}

// OWASP's scrypt baseline (N=2^17, r=8, p=1) makes a sign-in wait noticeably on a small shared box;
// 2^15 does a quarter of that work while still needing 32 MiB of memory per guess.
export const DEFAULT_SCRYPT_PARAMETERS: ScryptParameters = { ln: 15, r: 8, p: 1 };
const SALT_BYTES = 16;
const HASH_BYTES = 32;
const PHC_PATTERN = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 1024;

function deriveKey(password: string, salt: Buffer, length: number, params: ScryptParameters): Promise<Buffer> {
  const N = 2 ** params.ln;
  // scrypt needs 128·N·r bytes; allow twice that so Node's default 32 MiB ceiling never bites.
  const options: ScryptOptions = { N, r: params.r, p: params.p, maxmem: 256 * N * params.r + 1024 * 1024 };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, length, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

const b64 = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '');

export async function hashPassword(password: string, params: ScryptParameters = DEFAULT_SCRYPT_PARAMETERS): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await deriveKey(password, salt, HASH_BYTES, params);
  return `$scrypt$ln=${params.ln},r=${params.r},p=${params.p}$${b64(salt)}$${b64(hash)}`;
}

/**
 * True when `password` matches `stored`. A malformed stored hash never matches.
 * @NOTE: the comparison is constant-time (timingSafeEqual over equal-length digests).
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const match = PHC_PATTERN.exec(stored);
  if (!match) return false;
  const params: ScryptParameters = { ln: Number(match[1]), r: Number(match[2]), p: Number(match[3]) };
  if (params.ln < 10 || params.ln > 22 || params.r < 1 || params.p < 1) return false;
  const salt = Buffer.from(match[4]!, 'base64');
  const expected = Buffer.from(match[5]!, 'base64');
  if (expected.length < 16) return false;
  const actual = await deriveKey(password, salt, expected.length, params);
  return timingSafeEqual(actual, expected);
}

/** Problems with a proposed password, as sentences; empty when it is acceptable. */
export function passwordProblems(password: string): string[] {
  if (password.length < PASSWORD_MIN_LENGTH) return [`must be at least ${PASSWORD_MIN_LENGTH} characters`];
  if (password.length > PASSWORD_MAX_LENGTH) return [`must be at most ${PASSWORD_MAX_LENGTH} characters`];
  return [];
}
