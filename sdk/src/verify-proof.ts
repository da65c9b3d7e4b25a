import { sha256Hex, verdictOf, verdictWords, verifyBundle } from '#proof-verifier';
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
      /** With `policy`: the witnesses whose cosignatures verify and the bound they give. */
      witnessing?: Witnessing;
      /** When the bundle carries an RFC 3161 token over its checkpoint: the TSA's time and name, and whether its root was checked (`tsaRoots`). */
      timestamp?: Timestamp;
      /** `proof … in <log>`, with a policy `; logged no later than T, attested by k of n witnesses`, with TSA roots `; timestamped no later than T by <TSA> (RFC 3161)`: the words of `wo proof verify`. */
      detail: string;
      files: FileVerdict[];
    }
  | { valid: false; reason: ProofFailureReason | 'not_evidence'; detail: string; files: FileVerdict[] };

/** What the witnesses of a policy attest about the checkpoint a proof is tied to. */
export interface Witnessing {
  /** The policy's witnesses whose cosignatures verify, with the time each cosigned (ISO 8601). */
  cosigned: Array<{ name: string; at: string }>;
  /** How many witnesses the policy names. */
  witnesses: number;
  /** The log held the statement no later than this: when a quorum had cosigned. Null with `quorum none`. */
  loggedBy: string | null;
}

/** What an RFC 3161 time-stamping authority attests about the checkpoint a proof is tied to. */
export interface Timestamp {
  /** The TSA's time: the checkpoint existed no later than this (ISO 8601). */
  at: string;
  /** The TSA's name (its certificate's common name). */
  tsa: string;
  /** Whether its certificate chains to one of `tsaRoots`; without roots the time bounds nothing. */
  rootChecked: boolean;
}

/** A file to check: its bytes, or its bytes with a name for the report. */
export type EvidenceFile = Uint8Array | ArrayBuffer | { name: string; bytes: Uint8Array | ArrayBuffer };

export interface VerifyProofOptions {
  /** Files that must each be evidence the proof names (same SHA-256, and same size when the entry has one). */
  files?: EvidenceFile[];
  /**
   * A C2SP tlog-policy file's text (witnesses, groups, quorum): then the checkpoint must carry
   * cosignatures of a quorum, each verified, and the statement's `completedAt` must not be later
   * than the time they attest (plus 300 s of clock difference). Without it, witnesses are not checked.
   */
  policy?: string;
  /**
   * PEM text of the RFC 3161 TSA roots you trust: then the checkpoint must carry a timestamp token
   * whose signer chains to one, and the statement's `completedAt` must not be later than its time
   * (plus 300 s). Without it, a token the bundle carries is still checked, but not its root.
   */
  tsaRoots?: string;
}

/**
 * Verifies a proof bundle offline with the same code as `wo proof verify`: the statement's Ed25519
 * signature by a key of `jwks`, its RFC 8785 form, the checkpoint signed by the log key, and the
 * statement's inclusion in that checkpoint's tree. With `files`, valid only if each is evidence the
 * proof names (else `not_evidence`). `jwks` is the only trust anchor: fetch `/.well-known/jwks.json` once and keep it.
 * Never throws for bad input: the result says why.
 */
export async function verifyProof(bundle: unknown, jwks: unknown, options: VerifyProofOptions = {}): Promise<VerifyProofResult> {
  const result = await verifyBundle(bundle, jwks, { ...(options.policy === undefined ? {} : { policy: options.policy }), ...(options.tsaRoots === undefined ? {} : { tsaRoots: options.tsaRoots }) });
  const digests: Array<Omit<FileVerdict, 'evidence'>> = [];
  for (const file of result.valid ? (options.files ?? []) : []) {
    const named = file instanceof Uint8Array || file instanceof ArrayBuffer ? { name: undefined, bytes: file } : file;
    const bytes = named.bytes instanceof Uint8Array ? named.bytes : new Uint8Array(named.bytes);
    digests.push({ name: named.name, sha256: await sha256Hex(bytes), size: bytes.length });
  }
  // The verdict, in the words `wo proof verify` and the /verify page use.
  const verdict = verdictOf(result, digests);
  return verdict.valid ? { ...verdict, detail: verdictWords(verdict).detail } : verdict;
}
