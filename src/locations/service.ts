import type { Db, Tx } from '../db/database.js';
import { DeleteGuards } from '../db/delete-guards.js';
import type { InTransaction } from '../idempotency/in-transaction.js';
import { assertVersion, deleteIfVersion, updateIfVersion } from '../db/versioned-rows.js';
import { writeOptimistically } from '../db/optimistic-write.js';
import { isForeignKeyViolation } from '../db/errors.js';
import type { LocationsTable } from './tables.js';
import { lockForOrganization } from '../db/row-locks.js';
import { searchKey } from '../db/text-search.js';
import { errors, type FieldError } from '../errors.js';
import { assertMetadataSize, patchedMetadata, type MetadataPatchMode } from '../metadata.js';
import type { Page } from '../db/page.js';
import { newId } from '../ids.js';
import { RowAppends } from '../db/row-appends.js';
import { customFieldFilters, NO_CUSTOM_FIELDS, splitCustomFieldFilters, type CustomFieldChecks } from '../custom-field-values.js';
import { isoNow, withCanonicalUpdatedAfter, type Clock } from '../clock.js';
import { emitEvent } from '../events/outbox.js';
import type { CreateLocationInput, Location, UpdateLocationInput } from './schemas.js';
import {
  findLocation,
  insertLocation,
  listLocations,
  locationDependents,
  parentOf,
  toLocation,
  type LocationFilter,
} from './repository.js';

/** Name of the per-organization lock that serializes moves within the location tree. */
const HIERARCHY_LOCK = 'location-hierarchy';

export class LocationService {
  /** What other features check before this location is deleted (a schedule's template naming it). */
  readonly deleteGuards = new DeleteGuards();
  private customFields: CustomFieldChecks = NO_CUSTOM_FIELDS;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /** How `customFields` are checked and filtered (the custom-fields feature). */
  checkCustomFieldsWith(checks: CustomFieldChecks): void {
    this.customFields = checks;
  }

  /** `within` runs as the last step of the create's transaction (see `InTransaction`). */
  async create(orgId: string, input: CreateLocationInput, within?: InTransaction<Location>): Promise<Location> {
    assertMetadataSize(input.metadata);
    assertCoordinatesPaired(input.latitude ?? null, input.longitude ?? null);
    const parentId = input.parentId ?? null;
    return this.db
      .transaction()
      .execute(async (tx) => {
        if (parentId !== null) await this.assertParentExists(tx, orgId, parentId);
        const now = isoNow(this.clock);
        const id = newId('location');
        const appends = new RowAppends();
        const customFields = await this.customFields.created(tx, 'location', { orgId, id, createdAt: now }, input.customFields, appends);
        const row: LocationsTable = {
          id,
          org_id: orgId,
          parent_id: parentId,
          name: input.name.trim(),
          name_search: searchKey(input.name.trim()),
          address: input.address ?? null,
          latitude: input.latitude ?? null,
          longitude: input.longitude ?? null,
          external_ref: input.externalRef ?? null,
          metadata: JSON.stringify(input.metadata ?? {}),
          created_at: now,
          updated_at: now,
          version: 1,
          custom_fields: customFields,
        };
        await insertLocation(tx, row);
        await appends.write(tx);
        const location = toLocation(row);
        await within?.(tx, location);
        return location;
      })
      .catch(translateVanishedParent);
  }

  async get(orgId: string, id: string): Promise<Location> {
    const row = await findLocation(this.db, orgId, id);
    if (!row) throw errors.notFound(`Location "${id}"`);
    return toLocation(row);
  }

  async list(orgId: string, filter: LocationFilter, page: Page): Promise<{ locations: Location[]; total: number }> {
    const split = splitCustomFieldFilters(filter);
    const customFields = await customFieldFilters(this.customFields, this.db, orgId, 'location', split.customFields);
    const { rows, total } = await listLocations(this.db, orgId, { ...withCanonicalUpdatedAfter(split.filter), ...(customFields ? { customFields } : {}) }, page);
    return { locations: rows.map(toLocation), total };
  }

  async update(orgId: string, id: string, input: UpdateLocationInput, acceptedVersions?: number[], metadataMode: MetadataPatchMode = 'replace'): Promise<Location> {
    assertMetadataSize(input.metadata);
    const moves = input.parentId !== undefined && input.parentId !== null;
    let valuesWrite: (() => Promise<void>) | undefined;
    return writeOptimistically(this.db, {
      noun: 'Location',
      id,
      acceptedVersions,
      read: async (tx) => {
        // Two concurrent moves could each pass the cycle check and together close a loop
        // (A under B, B under A), so moves within one organization take turns.
        if (moves) await lockForOrganization(tx, HIERARCHY_LOCK, orgId);
        return findLocation(tx, orgId, id);
      },
      decide: async (tx, current) => {
        const next: LocationsTable = { ...current };
        if (input.name !== undefined) {
          next.name = input.name.trim();
          next.name_search = searchKey(next.name);
        }
        if (input.address !== undefined) next.address = input.address;
        if (input.latitude !== undefined) next.latitude = input.latitude;
        if (input.longitude !== undefined) next.longitude = input.longitude;
        if (input.externalRef !== undefined) next.external_ref = input.externalRef;
        if (input.metadata !== undefined) next.metadata = patchedMetadata(current.metadata, input.metadata, metadataMode);
        if (input.parentId !== undefined) next.parent_id = input.parentId;
        if (input.customFields !== undefined) {
          const changed = await this.customFields.changed(tx, 'location', { orgId, id, createdAt: current.created_at }, current.custom_fields, input.customFields);
          next.custom_fields = changed.json;
          valuesWrite = changed.write;
        }
        assertCoordinatesPaired(next.latitude, next.longitude);
        if (next.parent_id !== null && next.parent_id !== current.parent_id) await this.assertValidParent(tx, orgId, id, next.parent_id);

        const unchanged = Object.entries(editableColumns(next)).every(([column, value]) => value === current[column as keyof LocationsTable]);
        if (unchanged) return { next: current };
        next.updated_at = isoNow(this.clock);
        next.version = current.version + 1;
        return { next, afterWrite: async () => valuesWrite?.() };
      },
      write: (tx, current, next) =>
        updateIfVersion(tx, 'locations', orgId, id, current.version, { ...editableColumns(next), updated_at: next.updated_at, version: next.version }),
      present: toLocation,
    }).catch(translateVanishedParent);
  }

  /**
   * Deletes a location nothing depends on. Child locations, assets and unfinished work orders keep
   * it (409 resource_in_use): move them first. Finished work orders keep the id as history.
   */
  async delete(orgId: string, id: string, acceptedVersions?: number[]): Promise<void> {
    await this.db
      .transaction()
      .execute(async (tx) => {
        const current = await findLocation(tx, orgId, id);
        if (!current) throw errors.notFound(`Location "${id}"`);
        assertVersion(acceptedVersions, current.version, 'The location');
        assertUnused(id, await locationDependents(tx, orgId, id));
        if (!(await deleteIfVersion(tx, 'locations', orgId, id, current.version))) {
          throw errors.conflict(`Location "${id}" changed while it was being deleted; fetch it again and retry.`);
        }
        // @NOTE: checked again after the delete holds the row: a work order created meanwhile
        // (its reference check share-locks the location on PostgreSQL) is seen here and wins.
        assertUnused(id, await locationDependents(tx, orgId, id));
        await this.deleteGuards.assertUnused(tx, orgId, id);
        // Lists show what exists; a syncing client learns of the deletion from the event feed.
        const occurredAt = isoNow(this.clock);
        await emitEvent(tx, { orgId, type: 'location.deleted', payload: { locationId: id, location: toLocation(current) }, occurredAt });
      })
      .catch((error: unknown) => {
        // A child location or asset created concurrently wins: the foreign key refuses the delete.
        if (isForeignKeyViolation(error)) throw errors.inUse(`Location "${id}" is still in use; move its child locations, assets and open work orders first.`);
        throw error;
      });
  }

  private async assertParentExists(tx: Tx, orgId: string, parentId: string): Promise<void> {
    if (!(await findLocation(tx, orgId, parentId, true))) {
      throw errors.unprocessable('The parent location does not exist in your organization.', [
        { field: 'body.parentId', message: `no location "${parentId}" exists in your organization` },
      ]);
    }
  }

  /** The new parent must exist and must not be the location itself or one of its descendants. */
  private async assertValidParent(tx: Tx, orgId: string, id: string, parentId: string): Promise<void> {
    await this.assertParentExists(tx, orgId, parentId);
    const seen = new Set<string>();
    // Walk up from the new parent; meeting the moved location means it would become its own ancestor.
    for (let ancestor: string | null | undefined = parentId; ancestor; ancestor = await parentOf(tx, orgId, ancestor)) {
      if (ancestor === id || seen.has(ancestor)) {
        throw errors.unprocessable('A location cannot be moved under itself or one of its own sub-locations.', [
          { field: 'body.parentId', message: `"${parentId}" is "${id}" or one of its sub-locations; that would make a cycle` },
        ]);
      }
      seen.add(ancestor);
    }
  }
}

/** The columns a client can change (what decides whether an update changes anything). */
function editableColumns(row: LocationsTable) {
  const { id: _id, org_id: _org, version: _version, created_at: _created, updated_at: _updated, ...columns } = row;
  return columns;
}

function assertUnused(id: string, dependents: { children: number; assets: number; openRecords: number }): void {
  const reasons: string[] = [];
  if (dependents.children > 0) reasons.push(`${dependents.children} child location(s)`);
  if (dependents.assets > 0) reasons.push(`${dependents.assets} asset(s)`);
  if (dependents.openRecords > 0) reasons.push(`${dependents.openRecords} open work order(s)`);
  if (reasons.length > 0) throw errors.inUse(`Location "${id}" still has ${reasons.join(', ')}; move or finish them first.`);
}

function assertCoordinatesPaired(latitude: number | null, longitude: number | null): void {
  if ((latitude === null) === (longitude === null)) return;
  const problems: FieldError[] = [
    latitude === null
      ? { field: 'body.latitude', message: 'is required when longitude is set (coordinates come as a pair)' }
      : { field: 'body.longitude', message: 'is required when latitude is set (coordinates come as a pair)' },
  ];
  throw errors.validation(problems);
}

/** The parent was deleted between our check and our write (the foreign key noticed). */
function translateVanishedParent(error: unknown): never {
  if (isForeignKeyViolation(error)) {
    throw errors.unprocessable('The parent location does not exist in your organization.', [
      { field: 'body.parentId', message: 'the location was deleted meanwhile' },
    ]);
  }
  throw error;
}
