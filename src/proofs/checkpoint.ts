import { concatBytes, fromBase64, toBase64, toHex, utf8 } from './encoding.js';
import type { Sha256 } from './merkle.js';

/**
 * C2SP tlog-checkpoint bodies inside C2SP signed notes (https://c2sp.org/tlog-checkpoint,
 * https://c2sp.org/signed-note), the format transparency-log tools (Go `note`, witnesses) read:
 *
 *   <origin>\n<tree size>\n<base64 root hash>\n
 *   \n
 *   — <key name> <base64(4-byte key id ‖ 64-byte Ed25519 signature)>\n
 *
 * The signature covers the body bytes exactly. Browser-safe: the verifier bundles it.
 */

export const SIGNATURE_LINE_PREFIX = '\u2014 ';
/** Signature type byte of Ed25519 in signed notes. */
const ED25519_ALGORITHM = 0x01;

export interface CheckpointBody {
  origin: string;
  treeSize: number;
  rootHash: Uint8Array;
}

export interface NoteSignature {
  name: string;
  keyId: Uint8Array;
  signature: Uint8Array;
}

export interface ParsedCheckpoint extends CheckpointBody {
  /** The exact signed text, ending in a newline. */
  body: string;
  signatures: NoteSignature[];
}

export function formatCheckpointBody({ origin, treeSize, rootHash }: CheckpointBody): string {
  return `${origin}\n${treeSize}\n${toBase64(rootHash)}\n`;
}

export function formatSignedNote(body: string, signatures: NoteSignature[]): string {
  const lines = signatures.map((s) => `${SIGNATURE_LINE_PREFIX}${s.name} ${toBase64(concatBytes(s.keyId, s.signature))}\n`);
  return `${body}\n${lines.join('')}`;
}

/** A key name usable in a signed note: non-empty, no whitespace, no `+`. */
export function isValidKeyName(name: string): boolean {
  return name.length > 0 && !/[\s+]/u.test(name);
}

/** key id = first 4 bytes of SHA-256(name ‖ 0x0A ‖ 0x01 ‖ 32-byte public key). */
export async function noteKeyId(sha256: Sha256, name: string, publicKey: Uint8Array): Promise<Uint8Array> {
  const digest = await sha256(concatBytes(utf8(name), new Uint8Array([0x0a, ED25519_ALGORITHM]), publicKey));
  return digest.slice(0, 4);
}

/** `<name>+<hex key id>+<base64(0x01 ‖ public key)>`, the verifier-key string of Go's `note` package. */
export function formatVerifierKey(name: string, keyId: Uint8Array, publicKey: Uint8Array): string {
  return `${name}+${toHex(keyId)}+${toBase64(concatBytes(new Uint8Array([ED25519_ALGORITHM]), publicKey))}`;
}

export function parseVerifierKey(text: string): { name: string; keyId: Uint8Array; publicKey: Uint8Array } | undefined {
  // The name and the hex id cannot contain '+'; the base64 key after them can.
  const match = /^([^+]+)\+([^+]+)\+(.+)$/s.exec(text.trim());
  if (!match) return undefined;
  const [, name, hexId, encoded] = match as unknown as [string, string, string, string];
  if (!isValidKeyName(name) || !/^[0-9a-f]{8}$/.test(hexId)) return undefined;
  const key = fromBase64(encoded);
  if (!key || key.length !== 33 || key[0] !== ED25519_ALGORITHM) return undefined;
  const keyId = new Uint8Array(hexId.match(/../g)!.map((h) => parseInt(h, 16)));
  return { name, keyId, publicKey: key.slice(1) };
}

/** Parses a signed checkpoint note; a string explains what is malformed. */
export function parseSignedCheckpoint(note: string): ParsedCheckpoint | string {
  if (typeof note !== 'string') return 'the checkpoint is not text';
  const split = note.lastIndexOf('\n\n');
  if (split < 0) return 'no blank line separates the checkpoint body from its signatures';
  const body = note.slice(0, split + 1);
  const signatureBlock = note.slice(split + 2);
  const lines = body.slice(0, -1).split('\n');
  if (lines.length < 3) return 'the body needs an origin, a tree size and a root hash';
  const [origin, sizeText, rootText] = lines as [string, string, string];
  if (origin.length === 0) return 'the origin line is empty';
  if (!/^(0|[1-9][0-9]*)$/.test(sizeText) || !Number.isSafeInteger(Number(sizeText))) return 'the tree size is not a decimal number';
  const rootHash = fromBase64(rootText);
  if (!rootHash || rootHash.length !== 32) return 'the root hash is not 32 bytes of base64';
  if (!signatureBlock.endsWith('\n')) return 'the signature lines do not end in a newline';
  const signatures: NoteSignature[] = [];
  for (const line of signatureBlock.slice(0, -1).split('\n')) {
    if (!line.startsWith(SIGNATURE_LINE_PREFIX)) return 'a signature line does not start with "— "';
    const fields = line.slice(SIGNATURE_LINE_PREFIX.length).split(' ');
    if (fields.length !== 2 || !isValidKeyName(fields[0]!)) return 'a signature line is not "— <name> <base64>"';
    const raw = fromBase64(fields[1]!);
    if (!raw || raw.length < 5) return 'a signature is not base64 of a key id and a signature';
    signatures.push({ name: fields[0]!, keyId: raw.slice(0, 4), signature: raw.slice(4) });
  }
  if (signatures.length === 0) return 'the checkpoint carries no signature';
  return { body, origin, treeSize: Number(sizeText), rootHash, signatures };
}
