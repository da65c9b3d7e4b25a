import type { Db, Tx } from '../db/database.js';
import { DeleteGuards } from '../db/delete-guards.js';
import type { InTransaction } from '../idempotency/in-transaction.js';
import { assertVersion, deleteIfVersion, updateIfVersion } from '../db/versioned-rows.js';
import { writeOptimistically } from '../db/optimistic-write.js';
import { isForeignKeyViolation, isUniqueViolation } from '../db/errors.js';
import type { AssetsTable } from './tables.js';
import { searchKey } from '../db/text-search.js';
import { emitEvent } from '../events/outbox.js';
import { errors } from '../errors.js';
import { assertMetadataSize, patchedMetadata, type MetadataPatchMode } from '../metadata.js';
import type { Page } from '../db/page.js';
import { findLocation } from '../locations/repository.js';
import type { RecordFilter } from '../records/list-repository.js';
import type { RecordService } from '../records/service.js';
import type { WorkOrder } from '../records/schemas.js';
import { newId } from '../ids.js';
import { RowAppends } from '../db/row-appends.js';
import { customFieldFilters, NO_CUSTOM_FIELDS, splitCustomFieldFilters, type CustomFieldChecks } from '../custom-field-values.js';
import { isoNow, withCanonicalUpdatedAfter, type Clock } from '../clock.js';
import type { Asset, AssetStatus, CreateAssetInput, UpdateAssetInput } from './schemas.js';
import {
  countAssetRecords,
  findAsset,
  insertAsset,
  listAssets,
  toAsset,
  type AssetFilter,
} from './repository.js';

/** Each changed field of an asset with its value before and after, as `asset.updated` carries it. */
export type AssetChanges = Partial<Record<keyof Asset, { from: unknown; to: unknown }>>;

/** The fields an `asset.updated` event reports; id, timestamps and version change with every write. */
const REPORTED_FIELDS = ['name', 'tag', 'serialNumber', 'manufacturer', 'model', 'status', 'locationId', 'externalRef', 'metadata', 'customFields', 'retiredAt'] as const;

export class AssetService {
  /** What other features check before this asset is deleted (a schedule's template naming it). */
  readonly deleteGuards = new DeleteGuards();
  private customFields: CustomFieldChecks = NO_CUSTOM_FIELDS;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly records: RecordService,
  ) {}

  /** How `customFields` are checked and filtered (the custom-fields feature). */
  checkCustomFieldsWith(checks: CustomFieldChecks): void {
    this.customFields = checks;
  }

  /** `within` runs as the last step of the create's transaction (see `InTransaction`). */
  async create(orgId: string, input: CreateAssetInput, within?: InTransaction<Asset>): Promise<Asset> {
    assertMetadataSize(input.metadata);
    const tag = input.tag.trim();
    return this.db
      .transaction()
      .execute(async (tx) => {
        const locationId = input.locationId ?? null;
        if (locationId !== null) await assertLocationExists(tx, orgId, locationId);
        const now = isoNow(this.clock);
        const status: AssetStatus = input.status ?? 'ACTIVE';
        const name = input.name.trim();
        const id = newId('asset');
        const appends = new RowAppends();
        const customFields = await this.customFields.created(tx, 'asset', { orgId, id, createdAt: now }, input.customFields, appends);
        const row: AssetsTable = {
          id,
          org_id: orgId,
          name,
          name_search: searchKey(name),
          tag,
          tag_search: searchKey(tag),
          serial_number: input.serialNumber ?? null,
          manufacturer: input.manufacturer ?? null,
          model: input.model ?? null,
          status,
          location_id: locationId,
          external_ref: input.externalRef ?? null,
          metadata: JSON.stringify(input.metadata ?? {}),
          retired_at: status === 'RETIRED' ? now : null,
          created_at: now,
          updated_at: now,
          version: 1,
          custom_fields: customFields,
        };
        await insertAsset(tx, row);
        await appends.write(tx);
        const asset = toAsset(row);
        await emitEvent(tx, { orgId, type: 'asset.created', payload: { assetId: asset.id, asset }, occurredAt: now });
        await within?.(tx, asset);
        return asset;
      })
      .catch((error: unknown) => translateWriteError(error, tag));
  }

  async get(orgId: string, id: string): Promise<Asset> {
    const row = await findAsset(this.db, orgId, id);
    if (!row) throw errors.notFound(`Asset "${id}"`);
    return toAsset(row);
  }

  async list(orgId: string, filter: AssetFilter, page: Page): Promise<{ assets: Asset[]; total: number }> {
    const split = splitCustomFieldFilters(filter);
    const customFields = await customFieldFilters(this.customFields, this.db, orgId, 'asset', split.customFields);
    const { rows, total } = await listAssets(this.db, orgId, { ...withCanonicalUpdatedAfter(split.filter), ...(customFields ? { customFields } : {}) }, page);
    return { assets: rows.map(toAsset), total };
  }

  /** The asset's work orders, through the work-order list with its filters (404 for another organization's asset). */
  async workOrders(orgId: string, id: string, filter: Omit<RecordFilter, 'assetId'>, page: Page): Promise<{ records: WorkOrder[]; total: number }> {
    if (!(await findAsset(this.db, orgId, id))) throw errors.notFound(`Asset "${id}"`);
    return this.records.list(orgId, { ...filter, assetId: id }, page);
  }

  async update(orgId: string, id: string, input: UpdateAssetInput, acceptedVersions?: number[], metadataMode: MetadataPatchMode = 'replace'): Promise<Asset> {
    assertMetadataSize(input.metadata);
    let valuesWrite: (() => Promise<void>) | undefined;
    return this.write(orgId, id, acceptedVersions, input.tag?.trim(), () => valuesWrite?.(), async (tx, current) => {
      const next: AssetsTable = { ...current };
      if (input.name !== undefined) {
        next.name = input.name.trim();
        next.name_search = searchKey(next.name);
      }
      if (input.tag !== undefined) {
        next.tag = input.tag.trim();
        next.tag_search = searchKey(next.tag);
      }
      if (input.serialNumber !== undefined) next.serial_number = input.serialNumber;
      if (input.manufacturer !== undefined) next.manufacturer = input.manufacturer;
      if (input.model !== undefined) next.model = input.model;
      if (input.externalRef !== undefined) next.external_ref = input.externalRef;
      if (input.metadata !== undefined) next.metadata = patchedMetadata(current.metadata, input.metadata, metadataMode);
      if (input.status !== undefined) next.status = input.status;
      if (input.customFields !== undefined) {
        const changed = await this.customFields.changed(tx, 'asset', { orgId, id, createdAt: current.created_at }, current.custom_fields, input.customFields);
        next.custom_fields = changed.json;
        valuesWrite = changed.write;
      }
      if (input.locationId !== undefined && input.locationId !== current.location_id) {
        if (input.locationId !== null) await assertLocationExists(tx, orgId, input.locationId);
        next.location_id = input.locationId;
      }
      return next;
    });
  }

  /** Retires an asset for good (status RETIRED): the usual end of an asset's life, keeping its work-order history. */
  async retire(orgId: string, id: string, acceptedVersions?: number[]): Promise<Asset> {
    return this.write(orgId, id, acceptedVersions, undefined, undefined, async (_tx, current) => ({ ...current, status: 'RETIRED' }));
  }

  /** Deletes an asset no work order refers to (409 otherwise: retire it instead). */
  async delete(orgId: string, id: string, acceptedVersions?: number[]): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      const current = await findAsset(tx, orgId, id);
      if (!current) throw errors.notFound(`Asset "${id}"`);
      assertVersion(acceptedVersions, current.version, 'The asset');
      await assertNoWorkOrders(tx, orgId, id);
      if (!(await deleteIfVersion(tx, 'assets', orgId, id, current.version))) {
        throw errors.conflict(`Asset "${id}" changed while it was being deleted; fetch it again and retry.`);
      }
      // @NOTE: checked again after the delete holds the row: a work order created meanwhile
      // (its reference check share-locks the asset on PostgreSQL) is seen here and wins.
      await assertNoWorkOrders(tx, orgId, id);
      await this.deleteGuards.assertUnused(tx, orgId, id);
      const now = isoNow(this.clock);
      await emitEvent(tx, { orgId, type: 'asset.deleted', payload: { assetId: id, asset: toAsset(current) }, occurredAt: now });
    }).catch((error: unknown) => {
      // Meters on the asset (their foreign key refuses the delete).
      if (isForeignKeyViolation(error)) throw errors.inUse(`Asset "${id}" still has meters; delete them or move them to another asset first.`);
      throw error;
    });
  }

  /**
   * Lets `change` compute the asset's next row and writes it optimistically (see writeOptimistically),
   * emitting `asset.updated` with the previous values in the same transaction.
   */
  private async write(
    orgId: string,
    id: string,
    acceptedVersions: number[] | undefined,
    tag: string | undefined,
    /** Writes what the change decided beside the row (custom-field values), once the row is written. */
    alsoWrite: (() => Promise<void> | undefined) | undefined,
    change: (tx: Tx, current: AssetsTable) => Promise<AssetsTable>,
  ): Promise<Asset> {
    return writeOptimistically(this.db, {
      noun: 'Asset',
      id,
      acceptedVersions,
      read: (tx) => findAsset(tx, orgId, id),
      decide: async (tx, current) => {
        const next = await change(tx, current);
        const now = isoNow(this.clock);
        if (next.status !== current.status) next.retired_at = next.status === 'RETIRED' ? now : null;

        const before = toAsset(current);
        const after = toAsset(next);
        const changes: AssetChanges = {};
        for (const field of REPORTED_FIELDS) {
          const from = before[field];
          const to = after[field];
          if (JSON.stringify(from) !== JSON.stringify(to)) changes[field] = { from, to };
        }
        if (Object.keys(changes).length === 0) return { next: current };

        next.updated_at = now;
        next.version = current.version + 1;
        const asset = toAsset(next);
        return {
          next,
          afterWrite: async () => {
            await alsoWrite?.();
            await emitEvent(tx, { orgId, type: 'asset.updated', payload: { assetId: id, changes, asset }, occurredAt: now });
          },
        };
      },
      write: (tx, current, next) => {
        const { id: _id, org_id: _org, ...columns } = next;
        return updateIfVersion(tx, 'assets', orgId, id, current.version, columns);
      },
      present: toAsset,
    }).catch((error: unknown) => translateWriteError(error, tag));
  }
}

async function assertLocationExists(tx: Tx, orgId: string, locationId: string): Promise<void> {
  if (!(await findLocation(tx, orgId, locationId, true))) {
    throw errors.unprocessable('The asset refers to a location that does not exist in your organization.', [
      { field: 'body.locationId', message: `no location "${locationId}" exists in your organization` },
    ]);
  }
}

async function assertNoWorkOrders(tx: Tx, orgId: string, id: string): Promise<void> {
  const count = await countAssetRecords(tx, orgId, id);
  if (count > 0) throw errors.inUse(`Asset "${id}" is referenced by ${count} work order(s); retire it instead (POST /api/v1/assets/${id}/retire).`);
}

function translateWriteError(error: unknown, tag: string | undefined): never {
  if (isUniqueViolation(error)) throw errors.alreadyExists(`An asset tagged "${tag ?? ''}" already exists in your organization.`);
  // The location was deleted between our check and our write.
  if (isForeignKeyViolation(error)) {
    throw errors.unprocessable('The asset refers to a location that does not exist in your organization.', [
      { field: 'body.locationId', message: 'the location was deleted meanwhile' },
    ]);
  }
  throw error;
}
