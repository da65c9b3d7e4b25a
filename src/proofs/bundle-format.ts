/**
 * What a proof bundle is and what its verification can answer: the shapes and the reasons that
 * verify.ts checks and that the SDK, the CLI and the /verify page show. Type imports only, as
 * verify.ts: the verifier is bundled for the browser.
 */
import type { CompletionStatement } from './statement.js';

/**
 * How much later than its witnesses' quorum time a statement may say it was completed: the service's
 * and the witnesses' clocks are independent. Also how far in the future a cosignature may be dated.
 */
export const CLOCK_SKEW_SECONDS = 300;

export const BUNDLE_MEDIA_TYPE = 'application/vnd.wo.proof+json;version=1';
export const BUNDLE_VERSION = 1;

export interface PublishedJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  use: 'sig';
  alg: 'EdDSA';
  /** `statement` keys sign completion statements; the `transparency-log` key signs checkpoints. */
  'x-wo-role': 'statement' | 'transparency-log';
  'x-wo-created-at'?: string;
  'x-wo-log-origin'?: string;
  'x-wo-note-key-id'?: string;
  'x-wo-verifier-key'?: string;
}

export interface Jwks {
  keys: PublishedJwk[];
}

export interface ProofBundle {
  /**
   * What the API answers with a sealed bundle, telling it from a pending answer. No signature covers
   * it and verification ignores it: bundles saved before it existed verify the same.
   */
  status?: 'sealed';
  version: number;
  mediaType: string;
  proofId: string;
  recordId: string;
  jws: string;
  leafIndex: number;
  treeSize: number;
  /** Base64 SHA-256 hashes, bottom-up (RFC 9162 §2.1.3.1). */
  inclusionProof: string[];
  /** The C2SP signed note of the checkpoint at `treeSize`. */
  checkpoint: string;
  /** With a TSA: its RFC 3161 TimeStampToken (DER, base64) over the checkpoint body. */
  timestampToken?: string;
  keys: { statementKid: string; logKeyName: string; logKeyId: string };
}

export const VERIFY_REASONS = {
  bundle_malformed: 'The bundle is not a version 1 proof bundle.',
  keys_malformed: 'The trusted keys cannot verify proofs (a JWKS of Ed25519 statement keys and a transparency-log key).',
  jws_malformed: 'The statement is not a compact JWS.',
  unsupported_algorithm: 'The statement is signed with an algorithm other than EdDSA (Ed25519).',
  unknown_key: 'The statement is signed by a key that is not among the trusted statement keys.',
  bad_signature: 'The statement signature does not verify: the statement was altered or signed by someone else.',
  statement_not_canonical: 'The signed payload is not the RFC 8785 canonical form of its JSON.',
  unsupported_statement: 'The statement is not a version 1 or 2 wo.completion statement.',
  bundle_mismatch: 'The bundle’s proof or record id differs from the signed statement.',
  checkpoint_malformed: 'The checkpoint is not a C2SP signed note of a tlog checkpoint.',
  unknown_log_key: 'No signature on the checkpoint comes from a trusted log key.',
  checkpoint_signature_invalid: 'The checkpoint signature does not verify: the checkpoint was altered.',
  checkpoint_origin_mismatch: 'The checkpoint names another log than the trusted log key.',
  tree_size_mismatch: 'The bundle’s tree size differs from the checkpoint’s.',
  leaf_not_in_tree: 'The inclusion proof does not lead from the statement to the checkpoint’s root hash.',
  policy_malformed: 'The witness policy is not a C2SP tlog-policy file.',
  log_not_in_policy: 'The witness policy lists logs, and the checkpoint’s log key is not one of them.',
  cosignature_invalid: 'A cosignature by a witness of the policy does not verify, or is dated in the future: the checkpoint or the cosignature was altered.',
  quorum_not_met: 'The checkpoint is not cosigned by a quorum of the policy’s witnesses.',
  completed_after_logged: 'The statement says the work order was completed after the time its witnesses attest the log held it.',
  tsa_roots_malformed: 'The trusted TSA roots are not PEM X.509 certificates.',
  timestamp_missing: 'TSA roots were given to check the checkpoint’s RFC 3161 timestamp, and the bundle carries none (one fetched before its checkpoint was timestamped has none: fetch it again).',
  timestamp_malformed: 'The checkpoint’s timestamp token is not an RFC 3161 TimeStampToken (base64 DER) carrying its signer’s certificate.',
  timestamp_imprint_mismatch: 'The timestamp token does not timestamp this checkpoint: its message imprint is not the SHA-256 of the checkpoint body.',
  timestamp_not_tsa: 'The timestamp token is signed by a certificate that may not sign timestamps (its only extended key usage must be id-kp-timeStamping, critical).',
  timestamp_signature_invalid: 'The timestamp token’s signature does not verify: the token was altered.',
  timestamp_untrusted_root: 'The timestamp token’s signer does not chain to a trusted TSA root.',
  completed_after_timestamped: 'The statement says the work order was completed after the time the TSA attests the checkpoint existed.',
} as const;

export type VerifyReason = keyof typeof VERIFY_REASONS;

export type VerifyResult =
  | {
      valid: true;
      statement: CompletionStatement;
      proofId: string;
      recordId: string;
      leafIndex: number;
      treeSize: number;
      statementKid: string;
      logOrigin: string;
      /** With a witness policy: who cosigned the checkpoint and the time bound they give. */
      witnessing?: Witnessing;
      /** When the bundle carries an RFC 3161 token over its checkpoint: what it attests. */
      timestamp?: Timestamp;
    }
  | { valid: false; reason: VerifyReason; detail: string };

export interface Witnessing {
  /** The policy's witnesses whose cosignatures verify, each with its cosignature time (ISO 8601). */
  cosigned: Array<{ name: string; at: string }>;
  /** How many witnesses the policy names. */
  witnesses: number;
  /** The earliest time by which a quorum had cosigned: the log held the statement no later than this. Null with `quorum none`. */
  loggedBy: string | null;
}

export interface Timestamp {
  /** The TSA's genTime (ISO 8601): the checkpoint, and so the statement, existed no later than this. */
  at: string;
  /** The TSA's name: its signing certificate's common name. */
  tsa: string;
  /** Whether its signer chains to a trusted root given (`tsaRoots`); without roots the time bounds nothing. */
  rootChecked: boolean;
}

export interface VerifyOptions {
  /** A C2SP tlog-policy file's text: the checkpoint must be cosigned by its quorum. */
  policy?: string;
  /** The verifier's clock (seconds since the epoch), for cosignatures dated in the future. */
  nowSeconds?: number;
  /** PEM text of the RFC 3161 TSA roots to trust: then the checkpoint must carry a token whose signer chains to one. */
  tsaRoots?: string;
  webCrypto?: Crypto;
}
