import type { RecordHistoryEntry, WorkOrder } from '../records/schemas.js';
import { historyEntryOf } from '../records/history-entry.js';
import type { CompletionStatement } from './statement-schema.js';

/**
 * The completion statement: what the service asserts when a work order reaches COMPLETED.
 * Versioned (`v`) so verifiers can refuse shapes they do not understand; serialized with
 * RFC 8785 (src/canonical-json.ts) and signed as a compact JWS whose payload is exactly those bytes.
 */
export const STATEMENT_VERSION = 1;
export const STATEMENT_TYPE = 'wo.completion';
/** JWS protected header `cty`: the payload's media type. */
export const STATEMENT_CONTENT_TYPE = 'application/vnd.wo.completion-statement+json;version=1';

export type { CompletionStatement, EvidenceDigest } from './statement-schema.js';

export interface StatementInput {
  proofId: string;
  orgId: string;
  record: WorkOrder;
  history: RecordHistoryEntry[];
  evidence: Array<{ name: string; sha256: string; mediaType?: string | null; attachmentId?: string; size?: number }>;
  supersedes: string | null;
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
  };
}
