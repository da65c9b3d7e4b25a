/** Row types of this feature's tables (timestamps ISO 8601 UTC text, JSON columns serialized text; see src/db/tables.ts). */
/** A file attached to a work order; its bytes are in `attachment_chunks` (migration 0015). */
export interface AttachmentsTable {
  id: string;
  org_id: string;
  /** The work order; null while a work request owns the file (set when the request is approved, migration 0027). */
  record_id: string | null;
  /** The work request it came with, if any (docs/requests.md): the work order then lists the same file. */
  request_id: string | null;
  filename: string;
  media_type: string;
  /** `uploading` while chunks arrive (read by nothing but the sweeper), then `stored`. */
  state: 'uploading' | 'stored';
  size: number;
  /** Lowercase hex SHA-256 of the bytes; null while uploading. */
  sha256: string | null;
  /** Size of every chunk but the last, so a byte range maps to chunk numbers. */
  chunk_bytes: number;
  /** When a completion first named the file as evidence: from then on it cannot be deleted. */
  evidence_at: string | null;
  created_at: string;
}

/** Chunk `n` (from 0) of an attachment's bytes. */
export interface AttachmentChunksTable {
  attachment_id: string;
  n: number;
  bytes: Uint8Array;
}

declare module '../db/tables.js' {
  interface Tables {
    attachments: AttachmentsTable;
    attachment_chunks: AttachmentChunksTable;
  }
}
