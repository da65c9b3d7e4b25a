import { errors, type FieldError } from '../errors.js';
import type { CompletionEvidence, EvidenceResolver } from '../records/service.js';
import { markEvidence } from './repository.js';

/**
 * Turns a completion's `evidence` into what its proof states: a digest given as is stays as it is; an
 * attachment of the work order becomes its name, media type, size and SHA-256, and is marked as
 * evidence in the same transaction, so it can no longer be deleted.
 * @NOTE: an attachment of another work order or organization gets the same 400 as a missing one.
 */
export const resolveCompletionEvidence: EvidenceResolver = async (tx, orgId, recordId, evidence, now) => {
  const resolved: CompletionEvidence[] = [];
  const problems: FieldError[] = [];
  const seen = new Set<string>();
  for (const [index, item] of evidence.entries()) {
    if (!('attachmentId' in item)) {
      resolved.push(item);
      continue;
    }
    const field = `body.evidence.${index}.attachmentId`;
    if (seen.has(item.attachmentId)) {
      problems.push({ field, message: `lists attachment "${item.attachmentId}" a second time` });
      continue;
    }
    seen.add(item.attachmentId);
    const row = await markEvidence(tx, orgId, recordId, item.attachmentId, now);
    if (!row) {
      problems.push({ field, message: `no attachment "${item.attachmentId}" of this work order exists` });
      continue;
    }
    resolved.push({ attachmentId: row.id, name: row.filename, mediaType: row.media_type, size: Number(row.size), sha256: row.sha256 });
  }
  if (problems.length > 0) throw errors.validation(problems, 'The evidence names files that are not attached to this work order.');
  return resolved;
};
