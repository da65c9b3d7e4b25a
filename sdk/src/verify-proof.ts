import { sha256Hex, verdictOf, verifyBundle } from '#proof-verifier';
import type { CompletionStatement, EvidenceDigest, ProofFailureReason } from './proof-types.js';

/** A file checked against the proof's evidence. */
export interface FileVerdict {
  /** The name you gave the file, if any. */
  name: string | undefined;
  sha256: string;
  size: number;
  /** The statement's evidence entry this file is, or null when it is none of them. */
  evidence: EvidenceDigest | null;
}

export type VerifyProofResult =
  | {
      valid: true;
      statement: CompletionStatement;
      proofId: string;
      recordId: string;
      leafIndex: number;
      treeSize: number;
      statementKid: string;
      logOrigin: string;
      files: FileVerdict[];
    }
  | { valid: false; reason: ProofFailureReason | 'not_evidence'; detail: string; files: FileVerdict[] };

/** A file to check: its bytes, or its bytes with a name for the report. */
export type EvidenceFile = Uint8Array | ArrayBuffer | { name: string; bytes: Uint8Array | ArrayBuffer };

export interface VerifyProofOptions {
  /** Files that must each be evidence the proof names (same SHA-256, and same size when the entry has one). */
  files?: EvidenceFile[];
}

/**
 * Verifies a proof bundle offline with the same code as `wo proof verify`: the statement's Ed25519
 * signature by a key of `jwks`, its RFC 8785 form, the checkpoint signed by the log key, and the
 * statement's inclusion in that checkpoint's tree. With `files`, valid only if each is evidence the
 * proof names (else `not_evidence`). `jwks` is the only trust anchor: fetch `/.well-known/jwks.json` once and keep it.
 * Never throws for bad input: the result says why.
 */
export async function verifyProof(bundle: unknown, jwks: unknown, options: VerifyProofOptions = {}): Promise<VerifyProofResult> {
  const result = await verifyBundle(bundle, jwks);
  const digests: Array<Omit<FileVerdict, 'evidence'>> = [];
  for (const file of result.valid ? (options.files ?? []) : []) {
    const named = file instanceof Uint8Array || file instanceof ArrayBuffer ? { name: undefined, bytes: file } : file;
    const bytes = named.bytes instanceof Uint8Array ? named.bytes : new Uint8Array(named.bytes);
    digests.push({ name: named.name, sha256: await sha256Hex(bytes), size: bytes.length });
  }
  // The verdict, in the words `wo proof verify` and the /verify page use.
  return verdictOf(result, digests);
}
