import type { FieldError } from '../errors.js';
import { errors } from '../errors.js';
import type { AssigneeResolver } from '../records/assignment.js';
import type { Assignee, AssigneeType } from '../records/schemas.js';
import { findEntry, type DirectoryTable } from './repository.js';

const TABLE_OF: Record<AssigneeType, DirectoryTable> = { person: 'people', team: 'teams', vendor: 'vendors' };

/**
 * The records feature's AssigneeResolver: each assignee named must be an active person, team or
 * vendor of the organization, named once; their names are taken as they are now. Each row is
 * share-locked (PostgreSQL) until the assignment commits, so a concurrent delete waits for it and
 * then sees the work order naming it (409 in_use), and a concurrent deactivation waits or is seen.
 * @NOTE: another organization's id gets the same answer as a missing one, so ids leak nothing.
 */
export const resolveAssignees: AssigneeResolver = async (tx, orgId, requested, field) => {
  const problems: FieldError[] = [];
  const assignees: Assignee[] = [];
  const seen = new Set<string>();
  for (const [index, { type, id }] of requested.entries()) {
    const at = `${field}.${index}`;
    if (seen.has(id)) {
      problems.push({ field: at, message: `names ${type} "${id}" a second time` });
      continue;
    }
    seen.add(id);
    const row = await findEntry(tx, TABLE_OF[type], orgId, id, 'share');
    if (!row) problems.push({ field: at, message: `no ${type} "${id}" exists in your organization` });
    else if (!row.active) problems.push({ field: at, message: `${type} "${id}" (${row.name}) is deactivated: it stays on the work orders that name it, and takes no new ones` });
    else assignees.push({ type, id, name: row.name });
  }
  if (problems.length > 0) throw errors.unprocessable('The assignees must be active people, teams or vendors of your organization.', problems);
  return assignees;
};
