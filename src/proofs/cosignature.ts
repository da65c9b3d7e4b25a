import { isValidKeyName, SIGNATURE_LINE_PREFIX, type NoteSignature } from './checkpoint.js';
import { bytesEqual, concatBytes, fromBase64, toBase64, toHex, utf8 } from './encoding.js';
import type { Sha256, SyncSha256 } from './merkle.js';

/**
 * C2SP tlog-cosignature v1.0.1, the Ed25519 type (https://c2sp.org/tlog-cosignature@v1.0.1): a
 * witness's signature line on a checkpoint.
 *
 *   key id    = SHA-256(<name> ‖ "\n" ‖ 0x04 ‖ 32-byte public key)[:4]
 *   signature = u64 big-endian timestamp ‖ Ed25519 signature (72 bytes)
 *   message   = "cosignature/v1\n" ‖ "time <timestamp>\n" ‖ the checkpoint body
 *
 * The timestamp is a POSIX time in seconds, at most 2^63 − 1. Browser-safe: the verifier bundles it.
 */

/** Signature type byte of timestamped Ed25519 cosignatures in signed notes and vkeys. */
export const COSIGNATURE_V1_ALGORITHM = 0x04;
const ED25519_ALGORITHM = 0x01;
const TIMESTAMPED_SIGNATURE_LENGTH = 8 + 64;
const MAX_TIMESTAMP = 2n ** 63n - 1n;

export interface CosignerKey {
  name: string;
  keyId: Uint8Array;
  publicKey: Uint8Array;
}

export async function cosignerKeyId(sha256: Sha256, name: string, publicKey: Uint8Array): Promise<Uint8Array> {
  return (await sha256(concatBytes(utf8(name), new Uint8Array([0x0a, COSIGNATURE_V1_ALGORITHM]), publicKey))).slice(0, 4);
}

export function cosignerKeyIdSync(sha256: SyncSha256, name: string, publicKey: Uint8Array): Uint8Array {
  return sha256(concatBytes(utf8(name), new Uint8Array([0x0a, COSIGNATURE_V1_ALGORITHM]), publicKey)).slice(0, 4);
}

/** The bytes a cosigner signs for `body` (a checkpoint body, ending in a newline) at `timestamp`. */
export function cosignatureMessage(body: string, timestamp: number): Uint8Array {
  return utf8(`cosignature/v1\ntime ${timestamp}\n${body}`);
}

/** `<name>+<hex key id>+<base64(0x04 ‖ public key)>`: a witness's vkey (signed-note v1.0.0 verifier key). */
export function formatCosignerVkey(key: CosignerKey): string {
  return `${key.name}+${toHex(key.keyId)}+${toBase64(concatBytes(new Uint8Array([COSIGNATURE_V1_ALGORITHM]), key.publicKey))}`;
}

interface VkeyParts {
  name: string;
  hexId: string;
  type: number;
  publicKey: Uint8Array;
}

function vkeyParts(text: string): VkeyParts | string {
  const match = /^([^+]+)\+([0-9a-f]{8})\+(.+)$/s.exec(text.trim());
  if (!match) return 'not a vkey (<name>+<8 hex digits>+<base64>)';
  const [, name, hexId, encoded] = match as unknown as [string, string, string, string];
  if (!isValidKeyName(name)) return 'the key name is empty or holds a space or "+"';
  const key = fromBase64(encoded);
  if (!key || key.length !== 33) return 'the key is not base64 of a type byte and a 32-byte Ed25519 public key';
  const type = key[0]!;
  if (type !== COSIGNATURE_V1_ALGORITHM && type !== ED25519_ALGORITHM) return `signature type 0x${type.toString(16).padStart(2, '0')} is not Ed25519 (0x01) or cosignature/v1 (0x04)`;
  return { name, hexId, type, publicKey: key.slice(1) };
}

const idInput = (parts: VkeyParts, type: number) => concatBytes(utf8(parts.name), new Uint8Array([0x0a, type]), parts.publicKey);
const ID_MISMATCH = 'the key id does not match the name and key';

/**
 * A cosigner's vkey: type 0x04 as it is, or a plain Ed25519 key (type 0x01) taken as the same key
 * cosigning (as Go's formats/note does), its key id recomputed for type 0x04. A string says what is wrong.
 */
export async function parseCosignerVkey(sha256: Sha256, text: string): Promise<CosignerKey | string> {
  const parts = vkeyParts(text);
  if (typeof parts === 'string') return parts;
  if (toHex((await sha256(idInput(parts, parts.type))).slice(0, 4)) !== parts.hexId) return ID_MISMATCH;
  return { name: parts.name, keyId: await cosignerKeyId(sha256, parts.name, parts.publicKey), publicKey: parts.publicKey };
}

/** parseCosignerVkey with a synchronous SHA-256 (the service reads its policy at start). */
export function parseCosignerVkeySync(sha256: SyncSha256, text: string): CosignerKey | string {
  const parts = vkeyParts(text);
  if (typeof parts === 'string') return parts;
  if (toHex(sha256(idInput(parts, parts.type)).slice(0, 4)) !== parts.hexId) return ID_MISMATCH;
  return { name: parts.name, keyId: cosignerKeyIdSync(sha256, parts.name, parts.publicKey), publicKey: parts.publicKey };
}

/** The timestamp and Ed25519 signature of a cosignature line's signature bytes; undefined when it is not 72 bytes or the time is out of range. */
export function readTimestampedSignature(signature: Uint8Array): { timestamp: number; signature: Uint8Array } | undefined {
  if (signature.length !== TIMESTAMPED_SIGNATURE_LENGTH) return undefined;
  let timestamp = 0n;
  for (let i = 0; i < 8; i++) timestamp = (timestamp << 8n) | BigInt(signature[i]!);
  if (timestamp > MAX_TIMESTAMP || timestamp > BigInt(Number.MAX_SAFE_INTEGER)) return undefined;
  return { timestamp: Number(timestamp), signature: signature.slice(8) };
}

export function timestampedSignature(timestamp: number, signature: Uint8Array): Uint8Array {
  const out = new Uint8Array(TIMESTAMPED_SIGNATURE_LENGTH);
  let t = BigInt(timestamp);
  for (let i = 7; i >= 0; i--) {
    out[i] = Number(t & 0xffn);
    t >>= 8n;
  }
  out.set(signature, 8);
  return out;
}

/** A cosignature line: `— <name> base64(key id ‖ timestamp ‖ signature)\n`. */
export function formatCosignatureLine(key: Pick<CosignerKey, 'name' | 'keyId'>, timestamp: number, signature: Uint8Array): string {
  return `${SIGNATURE_LINE_PREFIX}${key.name} ${toBase64(concatBytes(key.keyId, timestampedSignature(timestamp, signature)))}\n`;
}

/** Whether a note signature line is by this cosigner's key (same name and key id): only those are verified. */
export function isByCosigner(line: NoteSignature, key: CosignerKey): boolean {
  return line.name === key.name && bytesEqual(line.keyId, key.keyId);
}
