import type { RecordHistoryEntry, WorkOrder } from '../records/schemas.js';
import { historyEntryOf } from '../records/history-entry.js';
import type { CompletionStatement } from './statement-schema.js';

/**
 * The completion statement: what the service asserts when a work order reaches COMPLETED.
 * Versioned (`v`) so verifiers can refuse shapes they do not understand; serialized with
 * RFC 8785 (src/canonical-json.ts) and signed as a compact JWS whose payload is exactly those bytes.
 */
export const STATEMENT_VERSION = 2;
/**
 * The versions a verifier accepts. Version 2 added `checklists` (each checklist with its version and
 * answers, photo and signature files by SHA-256) and a checklist-shaped `record.source`; a version 1
 * statement means what it always meant, so proofs signed before stay valid.
 */
export const SUPPORTED_STATEMENT_VERSIONS: readonly number[] = [1, 2];
export const STATEMENT_TYPE = 'wo.completion';
/** JWS protected header `cty`: the payload's media type. */
export const STATEMENT_CONTENT_TYPE = 'application/vnd.wo.completion-statement+json;version=2';

export type { ChecklistFileDigest, CompletionStatement, EvidenceDigest, StatementChecklist } from './statement-schema.js';

export interface StatementInput {
  proofId: string;
  orgId: string;
  record: WorkOrder;
  history: RecordHistoryEntry[];
  evidence: Array<{ name: string; sha256: string; mediaType?: string | null; attachmentId?: string; size?: number }>;
  supersedes: string | null;
  checklists: StatementChecklistInput[];
}

/** A checklist of the completion with its answers (src/records/extensions.ts, StatementChecklist). */
export interface StatementChecklistInput {
  checklistId: string;
  version: number;
  name: string;
  answers: Array<{ key: string; type: string; value: unknown; failed: boolean; answeredBy: string; answeredAt: string; files?: Array<{ attachmentId: string; filename: string; mediaType: string | null; size: number; sha256: string }> }>;
}

export function buildCompletionStatement(input: StatementInput): CompletionStatement {
  const { record } = input;
  if (!record.completedAt) throw new Error('a completion statement needs a completed work order');
  return {
    v: STATEMENT_VERSION,
    type: STATEMENT_TYPE,
    proofId: input.proofId,
    org: { id: input.orgId },
    record: {
      id: record.id,
      status: record.status,
      categoryId: record.categoryId,
      address: record.address,
      requesterName: record.requesterName,
      description: record.description,
      priority: record.priority,
      dueAt: record.dueAt,
      assetId: record.assetId,
      locationId: record.locationId,
      externalRef: record.externalRef,
      metadata: record.metadata,
      createdAt: record.createdAt,
      version: record.version,
      // Only when a schedule made it, so statements of other work orders keep their bytes.
      ...(record.source ? { source: record.source } : {}),
    },
    resolutionNotes: record.resolutionNotes,
    assignee: record.assignee,
    // Only when someone of the directory was assigned, so statements of other work orders keep their bytes.
    ...(record.assignees.length > 0 ? { assignees: record.assignees.map(({ type, id, name }) => ({ type, id, name })) } : {}),
    history: input.history.map(historyEntryOf),
    completedAt: record.completedAt,
    evidence: input.evidence.map((e) =>
      e.attachmentId === undefined || e.size === undefined
        ? { name: e.name, sha256: e.sha256, mediaType: e.mediaType ?? null }
        : { attachmentId: e.attachmentId, name: e.name, mediaType: e.mediaType ?? null, size: e.size, sha256: e.sha256 },
    ),
    supersedes: input.supersedes,
    checklists: input.checklists.map((checklist) => ({
      checklistId: checklist.checklistId,
      version: checklist.version,
      name: checklist.name,
      answers: checklist.answers.map((answer) => ({
        key: answer.key,
        type: answer.type,
        value: answer.value,
        failed: answer.failed,
        answeredBy: answer.answeredBy,
        answeredAt: answer.answeredAt,
        ...(answer.files ? { files: answer.files.map(({ attachmentId, filename, mediaType, size, sha256 }) => ({ attachmentId, filename, mediaType, size, sha256 })) } : {}),
      })),
    })),
  };
}
