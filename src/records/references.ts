import { findCategory } from '../categories/repository.js';
import { findAsset } from '../assets/repository.js';
import { findLocation } from '../locations/repository.js';
import type { FieldError } from '../errors.js';
import type { ReferenceCheck } from './service.js';

/**
 * The ids a work order points at must name things in the caller's organization.
 * @NOTE: another organization's id gets the same answer as a missing one, so ids leak nothing.
 * The asset and location are share-locked on PostgreSQL until the work order commits, so they
 * cannot be deleted in between (their delete re-checks for work orders once it holds the row).
 */
export const checkRecordReferences: ReferenceCheck = async (tx, orgId, refs) => {
  const problems: FieldError[] = [];
  if (refs.categoryId !== undefined && !(await findCategory(tx, orgId, refs.categoryId, true))) {
    problems.push({ field: 'body.categoryId', message: `no category "${refs.categoryId}" exists in your organization` });
  }
  if (refs.assetId && !(await findAsset(tx, orgId, refs.assetId, true))) {
    problems.push({ field: 'body.assetId', message: `no asset "${refs.assetId}" exists in your organization` });
  }
  if (refs.locationId && !(await findLocation(tx, orgId, refs.locationId, true))) {
    problems.push({ field: 'body.locationId', message: `no location "${refs.locationId}" exists in your organization` });
  }
  return problems;
};
