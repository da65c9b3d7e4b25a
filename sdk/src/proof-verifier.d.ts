// The project's proof verifier (the one `wo proof verify` and the /verify page run), which the build
// compiles into the SDK. These are the parts of its signature the SDK uses; the SDK's tests check
// them against the verifier's own types.
import type { CompletionStatement, EvidenceDigest, ProofFailureReason } from './proof-types.js';

export interface Witnessing {
  cosigned: Array<{ name: string; at: string }>;
  witnesses: number;
  loggedBy: string | null;
}

export interface Timestamp {
  at: string;
  tsa: string;
  rootChecked: boolean;
}

export type VerifyResult =
  | { valid: true; statement: CompletionStatement; proofId: string; recordId: string; leafIndex: number; treeSize: number; statementKid: string; logOrigin: string; witnessing?: Witnessing; timestamp?: Timestamp }
  | { valid: false; reason: ProofFailureReason; detail: string };

export interface FileDigest {
  name: string | undefined;
  sha256: string;
  size: number;
}
export type Verdict =
  | (Extract<VerifyResult, { valid: true }> & { files: Array<FileDigest & { evidence: EvidenceDigest | null }> })
  | { valid: false; reason: ProofFailureReason | 'not_evidence'; detail: string; files: Array<FileDigest & { evidence: EvidenceDigest | null }> };

export function verifyBundle(bundle: unknown, keys: unknown, options?: { policy?: string; nowSeconds?: number; tsaRoots?: string }): Promise<VerifyResult>;
export function verdictWords(verdict: Verdict): { headline: string; detail: string };
export function describeWitnessing(witnessing: Witnessing): string;
export function describeTimestamp(timestamp: Timestamp): string;
export function verdictOf(result: VerifyResult, files: readonly FileDigest[]): Verdict;
export function sha256Hex(bytes: Uint8Array): Promise<string>;
