// The project's proof verifier (the one `wo proof verify` and the /verify page run), which the build
// compiles into the SDK. These are the parts of its signature the SDK uses; the SDK's tests check
// them against the verifier's own types.
import type { CompletionStatement, EvidenceDigest, ProofFailureReason } from './proof-types.js';

export type VerifyResult =
  | { valid: true; statement: CompletionStatement; proofId: string; recordId: string; leafIndex: number; treeSize: number; statementKid: string; logOrigin: string }
  | { valid: false; reason: ProofFailureReason; detail: string };

export function verifyBundle(bundle: unknown, keys: unknown): Promise<VerifyResult>;
export function evidenceMatching(statement: CompletionStatement, sha256: string, size: number): EvidenceDigest | undefined;
export function sha256Hex(bytes: Uint8Array): Promise<string>;
