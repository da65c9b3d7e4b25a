import { evidenceMatching, sha256Hex, verifyBundle } from '#proof-verifier';
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
 * proof names. `jwks` is the only trust anchor: fetch `/.well-known/jwks.json` once and keep it.
 * Never throws for bad input: the result says why.
 */
export async function verifyProof(bundle: unknown, jwks: unknown, options: VerifyProofOptions = {}): Promise<VerifyProofResult> {
  const result = await verifyBundle(bundle, jwks);
  if (!result.valid) return { ...result, files: [] };
  const files: FileVerdict[] = [];
  for (const file of options.files ?? []) {
    const named = file instanceof Uint8Array || file instanceof ArrayBuffer ? { name: undefined, bytes: file } : file;
    const bytes = named.bytes instanceof Uint8Array ? named.bytes : new Uint8Array(named.bytes);
    const sha256 = await sha256Hex(bytes);
    files.push({ name: named.name, sha256, size: bytes.length, evidence: evidenceMatching(result.statement, sha256, bytes.length) ?? null });
  }
  const stranger = files.find((verdict) => verdict.evidence === null);
  if (stranger) {
    const detail = `${stranger.name ?? 'a file'} (${stranger.size} bytes, sha256 ${stranger.sha256}) is none of the ${result.statement.evidence.length} files the proof names`;
    return { valid: false, reason: 'not_evidence', detail, files };
  }
  return { ...result, files };
}
