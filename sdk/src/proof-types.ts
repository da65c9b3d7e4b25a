/** A file a completion names as evidence; one attached to the work order also has its id and size. */
export interface EvidenceDigest {
  name: string;
  /** Lowercase hex SHA-256 of the file. */
  sha256: string;
  mediaType: string | null;
  attachmentId?: string;
  size?: number;
}

export interface StatementHistoryEntry {
  action: string;
  from: string | null;
  to: string | null;
  /** `api_key:<key id>` of whoever made the change, or null for system changes. */
  actor: string | null;
  at: string;
  data: Record<string, unknown>;
}

/** What a proof's signed statement asserts about a completion (docs: proofs, "The statement"). */
export interface CompletionStatement {
  v: 1;
  type: 'wo.completion';
  proofId: string;
  org: { id: string };
  record: {
    id: string;
    status: string;
    categoryId: string;
    address: string;
    requesterName: string;
    description: string;
    priority: string;
    dueAt: string | null;
    assetId: string | null;
    locationId: string | null;
    externalRef: string | null;
    metadata: Record<string, unknown>;
    createdAt: string;
    version: number;
  };
  resolutionNotes: string | null;
  assignee: string | null;
  history: StatementHistoryEntry[];
  completedAt: string;
  evidence: EvidenceDigest[];
  /** The proof of this work order's previous completion (it was reopened since), or null. */
  supersedes: string | null;
}

/** Why a proof does not verify: the verifier's reasons, and a file that is none of its evidence. */
export type ProofFailureReason =
  | 'bundle_malformed'
  | 'keys_malformed'
  | 'jws_malformed'
  | 'unsupported_algorithm'
  | 'unknown_key'
  | 'bad_signature'
  | 'statement_not_canonical'
  | 'unsupported_statement'
  | 'bundle_mismatch'
  | 'checkpoint_malformed'
  | 'unknown_log_key'
  | 'checkpoint_signature_invalid'
  | 'checkpoint_origin_mismatch'
  | 'tree_size_mismatch'
  | 'leaf_not_in_tree';
