import { Type, type Static } from '@sinclair/typebox';
import { JsonObject, Nullable } from '../http/schema-types.js';
import { HistoryEntrySchema } from '../records/schemas.js';
import { STATEMENT_TYPE } from './statement.js';

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

/** A photo or signature image an answer names: the file attached to the work order, by SHA-256. */
export const ChecklistFileDigestSchema = Type.Object(
  {
    attachmentId: Type.String(),
    filename: Type.String(),
    mediaType: Nullable(Type.String()),
    size: Type.Integer(),
    sha256: Type.String({ description: 'Lowercase hex SHA-256 of the image.' }),
  },
  { $id: 'ChecklistFileDigest', description: 'A photo or signature image a checklist answer names, as attached to the work order.' },
);
export type ChecklistFileDigest = Static<typeof ChecklistFileDigestSchema>;

export const StatementChecklistSchema = Type.Object(
  {
    checklistId: Type.String(),
    version: Type.Integer({ description: 'The version of the checklist the work order was given.' }),
    name: Type.String(),
    answers: Type.Array(
      Type.Object({
        key: Type.String(),
        type: Type.String({ description: 'The item’s type: checkbox, pass_fail, number, text, select, photo, signature or meter_reading.' }),
        value: Type.Unknown({ description: 'The answer as given: true/false, "pass"/"fail", a number, a text, an option, `{attachmentIds}` (photo), `{name, attachmentId}` (signature), `{value, readingId}` (meter_reading).' }),
        failed: Type.Boolean({ description: 'A pass_fail answered fail, or a number outside the item’s min–max.' }),
        answeredBy: Type.String({ description: 'Who answered, as history names actors.' }),
        answeredAt: Type.String(),
        files: Type.Optional(Type.Array(ChecklistFileDigestSchema, { description: 'Photo and signature answers: the images, by SHA-256.' })),
      }),
      { description: 'Each answered item, in the checklist’s order.' },
    ),
  },
  { $id: 'StatementChecklist', description: 'A checklist of the completed work order, at its version, with its answers.' },
);
export type StatementChecklist = Static<typeof StatementChecklistSchema>;

export const CompletionStatementSchema = Type.Object(
  {
    v: Type.Union([Type.Literal(1), Type.Literal(2)], { description: 'The statement’s version: 2 since checklists; a version 1 statement has no `checklists`.' }),
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
        Type.Union(
          [
            Type.Object(
              { type: Type.Literal('schedule'), scheduleId: Type.String(), occurrence: Type.String() },
              { description: 'What generated the work order: the schedule and the occurrence it was done for, so an auditor can check that occurrence X of plan Y was done.' },
            ),
            Type.Object(
              { type: Type.Literal('checklist'), recordId: Type.String(), checklistId: Type.String(), item: Type.String() },
              { description: 'Version 2: the follow-up of a failed checklist item: the work order, checklist and item that failed.' },
            ),
          ],
          { description: 'What generated the work order; absent when a client created it.' },
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
    checklists: Type.Optional(Type.Array(StatementChecklistSchema, { description: 'Version 2: the work order’s checklists with their answers (empty when it had none); absent from version 1.' })),
  },
  { $id: 'CompletionStatement', description: 'What a proof’s signed statement asserts about a completion (docs: proofs, “The statement”).' },
);
export type CompletionStatement = Static<typeof CompletionStatementSchema>;
