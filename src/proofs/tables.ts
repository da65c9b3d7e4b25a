/** Row types of this feature's tables (timestamps ISO 8601 UTC text, JSON columns serialized text; see src/db/tables.ts). */
/** A signed completion statement; `pending` until the sequencer seals it into the transparency log. */
export interface ProofStatementsTable {
  id: string;
  org_id: string;
  record_id: string;
  /** The compact JWS; its exact ASCII bytes are the log leaf. Empty while `unsigned`. */
  jws: string;
  /** Lowercase hex SHA-256 of the RFC 8785 statement bytes. Empty while `unsigned`. */
  statement_digest: string;
  /** The statement as JSON while `unsigned` (the sequencer signs it); null once signed. */
  statement_json: string | null;
  /** The proof of the previous completion of the same work order (reopened since). */
  supersedes: string | null;
  /**
   * `unsigned`: written by the completion, waiting for the sequencer to sign and seal it.
   * `pending`: signed, waiting to be sealed (written at completion by releases before 0011).
   * `sealed`: a leaf of the log, under the checkpoint of `tree_size`.
   */
  status: 'unsigned' | 'pending' | 'sealed';
  leaf_index: number | null;
  /** Size of the first signed checkpoint that includes the leaf. */
  tree_size: number | null;
  created_at: string;
  sealed_at: string | null;
}

export interface TlogLeavesTable {
  leaf_index: number;
  proof_id: string;
  /** Lowercase hex RFC 9162 leaf hash. */
  leaf_hash: string;
}

/** Hash of the perfect subtree at (level, node_index) covering leaves [i·2^level, (i+1)·2^level); level ≥ 1. */
export interface TlogNodesTable {
  level: number;
  node_index: number;
  hash: string;
}

export interface TlogCheckpointsTable {
  tree_size: number;
  /** Lowercase hex root hash. */
  root_hash: string;
  /** The C2SP signed note, exactly as signed by the log. */
  note: string;
  created_at: string;
  /** When it was published (its statements delivered); null while it waits for its witnesses. */
  published_at: string | null;
  publication: 'log-signed' | 'witnessed' | 'unwitnessed' | null;
  /** The witnesses' cosignature lines, each ending in a newline; served after the log's. */
  cosignatures: string;
  /** With WO_TSA_URL: the TSA's RFC 3161 TimeStampToken over the checkpoint body (DER, base64); null until it has one. */
  timestamp_token: string | null;
}

/** Per witness of the policy: what it last cosigned and how its submissions go. */
export interface TlogWitnessesTable {
  vkey: string;
  /** Its name in the policy. */
  name: string;
  cosigned_size: number | null;
  last_attempt_at: string | null;
  last_success_at: string | null;
  /** Submissions that failed in a row. */
  failures: number;
  last_error: string | null;
}

/** The TSA of WO_TSA_URL: what it last timestamped and how the requests to it go. */
export interface TlogTimestampAuthoritiesTable {
  url: string;
  timestamped_size: number | null;
  last_attempt_at: string | null;
  last_success_at: string | null;
  /** Requests that failed in a row. */
  failures: number;
  last_error: string | null;
}

declare module '../db/tables.js' {
  interface Tables {
    proof_statements: ProofStatementsTable;
    tlog_leaves: TlogLeavesTable;
    tlog_nodes: TlogNodesTable;
    tlog_checkpoints: TlogCheckpointsTable;
    tlog_witnesses: TlogWitnessesTable;
    tlog_timestamp_authorities: TlogTimestampAuthoritiesTable;
  }
}
