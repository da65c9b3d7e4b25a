import { createPrivateKey, generateKeyPairSync, sign, type JsonWebKey, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createPrivateFile } from '../private-files.js';
import { isValidKeyName } from '../proofs/checkpoint.js';
import { cosignatureMessage, cosignerKeyIdSync, formatCosignatureLine, formatCosignerVkey, type CosignerKey } from '../proofs/cosignature.js';
import { fromBase64Url } from '../proofs/encoding.js';
import { sha256Sync } from '../proofs/keys.js';

/**
 * The witness's Ed25519 key, `<WO_WITNESS_DATA_DIR>/witness-ed25519.json` (mode 0600), made at the
 * first start with the name `WO_WITNESS_NAME` gives then. The name is part of the key id, so it is
 * kept beside the key: a later start naming another is refused rather than publishing a new vkey.
 */

const KEY_FILE = 'witness-ed25519.json';

interface WitnessKeyFile {
  createdAt: string;
  name: string;
  jwk: { kty: 'OKP'; crv: 'Ed25519'; x: string; d: string };
}

export class WitnessKeyError extends Error {
  override name = 'WitnessKeyError';
}

export class WitnessKey {
  private constructor(
    readonly key: CosignerKey,
    private readonly privateKey: KeyObject,
  ) {}

  /** Loads the key, creating it (named `name`) when the directory holds none. */
  static loadOrCreate(dataDir: string, name: string | undefined, now: Date, defaultName: string): WitnessKey {
    const file = path.join(dataDir, KEY_FILE);
    if (!fs.existsSync(file)) {
      const chosen = name ?? defaultName;
      if (!isValidKeyName(chosen)) throw new WitnessKeyError(`WO_WITNESS_NAME "${chosen}" cannot name a note key (no spaces or "+")`);
      const jwk = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' }) as WitnessKeyFile['jwk'];
      createPrivateFile(file, `${JSON.stringify({ createdAt: now.toISOString(), name: chosen, jwk } satisfies WitnessKeyFile, null, 2)}\n`);
    }
    let content: WitnessKeyFile;
    try {
      content = JSON.parse(fs.readFileSync(file, 'utf8')) as WitnessKeyFile;
    } catch (error) {
      throw new WitnessKeyError(`cannot read the witness key ${file}: ${(error as Error).message}`);
    }
    if (name !== undefined && name !== content.name) {
      throw new WitnessKeyError(`WO_WITNESS_NAME is "${name}", but this witness's key (${file}) was made as "${content.name}": the name is part of its vkey; unset WO_WITNESS_NAME or set it to "${content.name}"`);
    }
    const publicKey = fromBase64Url(content.jwk.x);
    if (!publicKey || publicKey.length !== 32 || !content.jwk.d) throw new WitnessKeyError(`${file} holds no Ed25519 private key`);
    const key: CosignerKey = { name: content.name, keyId: cosignerKeyIdSync(sha256Sync, content.name, publicKey), publicKey };
    return new WitnessKey(key, createPrivateKey({ key: content.jwk as unknown as JsonWebKey, format: 'jwk' }));
  }

  /** The C2SP vkey (type 0x04) that policies name. */
  get vkey(): string {
    return formatCosignerVkey(this.key);
  }

  /** The cosignature line for a checkpoint body at `timestamp` (seconds). */
  cosign(body: string, timestamp: number): string {
    return formatCosignatureLine(this.key, timestamp, sign(null, cosignatureMessage(body, timestamp), this.privateKey));
  }
}
