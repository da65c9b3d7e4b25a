import { Type, type Static } from '@sinclair/typebox';
import { JsonObject, Nullable } from '../http/schema-types.js';
import { HistoryEntrySchema } from '../records/schemas.js';
import { STATEMENT_TYPE, STATEMENT_VERSION } from './statement.js';

// The one statement of the completion statement's shape: the service's types are its `Static`, and
// the SDK's (sdk/src/proof-types.ts) are written from it by scripts/write-sdk-proof-types.ts.
// @NOTE: statement.ts and the verifier import only types from here: the verifier is bundled into the
// SDK and the /verify page, which must not carry TypeBox.

export const EvidenceDigestSchema = Type.Object(
  {
    name: Type.String(),
    sha256: Type.String({ description: 'Lowercase hex SHA-256 of the file.' }),
    mediaType: Nullable(Type.String()),
    attachmentId: Type.Optional(Type.String()),
    size: Type.Optional(Type.Integer()),
  },
  { $id: 'EvidenceDigest', description: 'A file a completion names as evidence; one attached to the work order also has its id and size.' },
);
export type EvidenceDigest = Static<typeof EvidenceDigestSchema>;

export const CompletionStatementSchema = Type.Object(
  {
    v: Type.Literal(STATEMENT_VERSION),
    type: Type.Literal(STATEMENT_TYPE),
    proofId: Type.String(),
    org: Type.Object({ id: Type.String() }),
    record: Type.Object({
      id: Type.String(),
      status: Type.String(),
      categoryId: Type.String(),
      address: Type.String(),
      requesterName: Type.String(),
      description: Type.String(),
      priority: Type.String(),
      dueAt: Nullable(Type.String()),
      assetId: Nullable(Type.String()),
      locationId: Nullable(Type.String()),
      externalRef: Nullable(Type.String()),
      metadata: JsonObject(),
      createdAt: Type.String(),
      version: Type.Integer(),
      source: Type.Optional(
        Type.Object(
          { type: Type.String(), scheduleId: Type.String(), occurrence: Type.String() },
          { description: 'What generated the work order: the schedule and the occurrence it was done for, so an auditor can check that occurrence X of plan Y was done.' },
        ),
      ),
    }),
    resolutionNotes: Nullable(Type.String()),
    assignee: Nullable(Type.String()),
    assignees: Type.Optional(
      Type.Array(
        Type.Object({ type: Type.String(), id: Type.String(), name: Type.String() }),
        { description: 'The people, teams and vendors the work order was assigned to, with their names when assigned; absent when none.' },
      ),
    ),
    // The work order's history as GET /records/{id}/history answers it: one schema for both.
    history: Type.Array(HistoryEntrySchema),
    completedAt: Type.String(),
    evidence: Type.Array(EvidenceDigestSchema),
    supersedes: Nullable(Type.String({ description: 'The proof of this work order’s previous completion (it was reopened since), or null.' })),
  },
  { $id: 'CompletionStatement', description: 'What a proof’s signed statement asserts about a completion (docs: proofs, “The statement”).' },
);
export type CompletionStatement = Static<typeof CompletionStatementSchema>;
