import type { Executor } from '../db/database.js';
import { errors } from '../errors.js';
import type { Assignee, AssigneeInput } from './schemas.js';

/**
 * Turns the `assignees` a request names into the work order's, with their names as they are now:
 * each must be a person, team or vendor of the organization, active, and named once (422 otherwise).
 * On PostgreSQL it share-locks their rows until the caller's transaction ends, so a concurrent delete
 * waits and then finds the work order naming them (409 in_use), or goes first and this finds them gone.
 * The people feature provides it (src/people/assignees.ts).
 */
export type AssigneeResolver = (tx: Executor, orgId: string, requested: readonly AssigneeInput[], field: string) => Promise<Assignee[]>;

/** Until the people feature registers its resolver: nobody can be named. */
export const noAssignees: AssigneeResolver = async (_tx, _orgId, requested, field) => {
  if (requested.length === 0) return [];
  throw errors.unprocessable('No directory of people, teams and vendors is available.', [{ field, message: 'cannot name assignees' }]);
};

/** The work order's assignees as stored (JSON text). */
export function storedAssignees(text: string): Assignee[] {
  return JSON.parse(text) as Assignee[];
}

/** The record.assigned payload's assignee fields: the free-text assignee and the assignees, before and after. */
export function assignedPayload(before: { assignee: string | null; assignees: string }, after: { assignee: string | null; assignees: string }) {
  return {
    assignee: after.assignee,
    previousAssignee: before.assignee,
    assignees: storedAssignees(after.assignees),
    previousAssignees: storedAssignees(before.assignees),
  };
}
