import type { Executor, Tx } from '../db/database.js';
import type { FieldError } from '../errors.js';
import type { RowAppends } from '../db/row-appends.js';
import type { AssigneeInput, RecordHistoryEntry, WorkOrder } from './schemas.js';
import type { StatementChecklist } from './extensions.js';

/** One item of a completion's `evidence`: the digest of a file kept elsewhere, or a file attached to the work order. */
export type EvidenceInput = { name: string; sha256: string; mediaType?: string } | { attachmentId: string };

export interface ActionInput {
  assignee?: string;
  assignees?: AssigneeInput[];
  resolutionNotes?: string;
  reason?: string;
  evidence?: EvidenceInput[];
}

/** Evidence as the completion proof states it; an attachment adds its id and size. */
export interface CompletionEvidence {
  name: string;
  sha256: string;
  mediaType?: string | null;
  attachmentId?: string;
  size?: number;
}

/** Resolves a completion's evidence in its transaction (attachments: src/attachments/evidence.ts). */
export type EvidenceResolver = (tx: Tx, orgId: string, recordId: string, evidence: EvidenceInput[], now: string) => Promise<CompletionEvidence[]>;

/** Checks that ids a work order points at exist in the caller's organization. */
export type ReferenceCheck = (tx: Tx, orgId: string, refs: { categoryId?: string; assetId?: string | null; locationId?: string | null; assignees?: readonly AssigneeInput[]; checklistIds?: readonly string[] }) => Promise<FieldError[]>;

export interface CompletionContext {
  /** The organization of the work order (the API representation does not carry it). */
  orgId: string;
  record: WorkOrder;
  history: RecordHistoryEntry[];
  evidence: CompletionEvidence[];
  actorKeyId: string;
  /** The work order's checklists with their answers (empty when it has none). */
  checklists: StatementChecklist[];
}

/**
 * Runs as a completion is written; the proof feature uses it to queue the statement. It may read
 * through `executor` (the completing transaction, or the database when the completion is one
 * statement) and adds what it writes to `appends`, which are written with the completion.
 */
export type CompletionHook = (executor: Executor, completion: CompletionContext, appends: RowAppends) => Promise<void>;

