import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createPrivateFile } from '../private-files.js';

/**
 * Encrypts webhook signing secrets at rest with AES-256-GCM.
 *
 * @NOTE: we must send the secret's HMAC, so we need the secret itself (a hash would not do).
 * The key lives outside the database (WO_SECRET_KEY, or a 0600 file in the keys directory), so
 * a database dump or backup alone reveals no secret. The row id is the GCM additional data: a
 * ciphertext copied onto another subscription's row does not decrypt.
 */
export class SecretBox {
  private static readonly VERSION = 'v1';

  private cachedKey: Buffer | undefined;

  /** `loadKey` runs on first use, so commands that never touch a secret create no key file. */
  constructor(private readonly loadKey: () => Buffer) {}

  /** From WO_SECRET_KEY when given, else from `<keysDir>/webhook-secrets.key`, created on first use. */
  static fromConfig(options: SecretKeySource): SecretBox {
    if (options.secretKey) {
      const key = parseKey(options.secretKey);
      return new SecretBox(() => key);
    }
    return new SecretBox(() => readOrCreateSecretKeyFile(options.keysDir));
  }

  private get key(): Buffer {
    this.cachedKey ??= this.loadKey();
    return this.cachedKey;
  }

  /**
   * A key of its own for `purpose` (HKDF-SHA256 of the deployment's secret key): every process
   * derives the same one, and it reveals nothing of the secret key or of another purpose's key.
   */
  derive(purpose: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.key, Buffer.alloc(0), `wo ${purpose}`, 32));
  }

  seal(plaintext: string, boundTo: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(boundTo));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `${SecretBox.VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
  }

  open(sealed: string, boundTo: string): string {
    const [version, data] = sealed.split(':');
    if (version !== SecretBox.VERSION || !data) throw new Error('unknown secret ciphertext format');
    const raw = Buffer.from(data, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(boundTo));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}

/** Where the key comes from: WO_SECRET_KEY, else a file in the keys directory. */
export interface SecretKeySource {
  secretKey: string | undefined;
  keysDir: string;
}

export function secretKeyFile(keysDir: string): string {
  return path.join(keysDir, 'webhook-secrets.key');
}

/** The configured key (WO_SECRET_KEY, else the key file), or undefined when there is neither. Creates nothing. */
export function readSecretKey(source: SecretKeySource): Buffer | undefined {
  if (source.secretKey) return parseKey(source.secretKey);
  const file = secretKeyFile(source.keysDir);
  return fs.existsSync(file) ? parseKey(fs.readFileSync(file, 'utf8').trim()) : undefined;
}

/** The key file's key; when there is no file yet, exactly one of several processes creating it at once wins. */
export function readOrCreateSecretKeyFile(keysDir: string): Buffer {
  const file = secretKeyFile(keysDir);
  if (!fs.existsSync(file)) createPrivateFile(file, `${randomBytes(32).toString('base64')}\n`);
  return parseKey(fs.readFileSync(file, 'utf8').trim());
}

export function parseKey(text: string): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (key.length !== 32) throw new Error('the secret-encryption key must be 32 bytes, given as 64 hex digits or base64');
  return key;
}

/**
 * A new signing secret: `whsec_` and 32 random bytes in standard base64, the Standard Webhooks
 * serialization, so that its libraries take the secret as it is shown (they refuse base64url).
 */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
