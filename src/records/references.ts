import { findCategory } from '../categories/repository.js';
import type { FieldError } from '../http/errors.js';
import type { ReferenceCheck } from './service.js';

/**
 * The ids a work order points at must name things in the caller's organization.
 * @NOTE: another organization's id gets the same answer as a missing one, so ids leak nothing.
 */
export const checkRecordReferences: ReferenceCheck = async (tx, orgId, refs) => {
  const problems: FieldError[] = [];
  if (refs.categoryId !== undefined && !(await findCategory(tx, orgId, refs.categoryId))) {
    problems.push({ field: 'body.categoryId', message: `no category "${refs.categoryId}" exists in your organization` });
  }
  return problems;
};
