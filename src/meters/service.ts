import type { Db, Tx } from '../db/database.js';
import type { InTransaction } from '../idempotency/in-transaction.js';
import type { MeterReadingsTable, MetersTable } from './tables.js';
import { writeOptimistically } from '../db/optimistic-write.js';
import { isForeignKeyViolation, isUniqueViolation } from '../db/errors.js';
import { assertVersion } from '../db/versioned-rows.js';
import type { Page } from '../db/page.js';
import { emitEvent } from '../events/outbox.js';
import { errors, type FieldError } from '../errors.js';
import { findAsset } from '../assets/repository.js';
import { newId } from '../ids.js';
import { canonicalInstant, isoNow, withCanonicalUpdatedAfter, type Clock } from '../clock.js';
import { compareReadings, findDecreases, type OrderedReading } from './reading-order.js';
import {
  MAX_READING_LEAD_MS,
  type CreateMeterInput,
  type Meter,
  type MeterReading,
  type PostReadingsAnswer,
  type PostReadingsInput,
  type UpdateMeterInput,
} from './schemas.js';
import {
  deleteMeterWithReadings,
  findMeter,
  findReadingsByExternalId,
  insertMeter,
  insertReadings,
  listMeters,
  listReadings,
  readingsAround,
  toMeter,
  toReading,
  updateMeterIfVersion,
  type MeterFilter,
} from './repository.js';

/**
 * Runs inside a readings batch's transaction once its readings are written: `meter` as it stands
 * after them (its new lastReading), `accepted` the readings stored by this batch in readAt order
 * (duplicates left out; never called for a batch of duplicates only). Throwing rolls the whole batch back.
 */
export type ReadingsAcceptedHook = (tx: Tx, meter: Meter, accepted: readonly MeterReading[]) => Promise<void>;

/** The fields a `meter.updated` event reports; id, timestamps, version and lastReading change without one. */
const REPORTED_FIELDS = ['name', 'assetId', 'unit'] as const;

export class MeterService {
  private readonly readingsHooks: ReadingsAcceptedHook[] = [];

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /** Registers work that must happen exactly once with every batch of new readings (preventive maintenance's triggers). */
  onReadingsAccepted(hook: ReadingsAcceptedHook): void {
    this.readingsHooks.push(hook);
  }

  /** `within` runs as the last step of the create's transaction (see `InTransaction`). */
  async create(orgId: string, input: CreateMeterInput, within?: InTransaction<Meter>): Promise<Meter> {
    return this.db
      .transaction()
      .execute(async (tx) => {
        const assetId = input.assetId ?? null;
        if (assetId !== null) await assertAssetExists(tx, orgId, assetId);
        const now = isoNow(this.clock);
        const row: MetersTable = {
          id: newId('meter'),
          org_id: orgId,
          asset_id: assetId,
          name: input.name.trim(),
          unit: input.unit.trim(),
          kind: input.kind,
          last_value: null,
          last_read_at: null,
          created_at: now,
          updated_at: now,
          version: 1,
        };
        await insertMeter(tx, row);
        const meter = toMeter(row);
        await emitEvent(tx, { orgId, type: 'meter.created', payload: { meterId: meter.id, meter }, occurredAt: now });
        await within?.(tx, meter);
        return meter;
      })
      .catch(translateWriteError);
  }

  /** The organization's meter, or undefined (for features that refer to meters, such as schedules). */
  async find(orgId: string, id: string): Promise<Meter | undefined> {
    const row = await findMeter(this.db, orgId, id);
    return row && toMeter(row);
  }

  async get(orgId: string, id: string): Promise<Meter> {
    const row = await findMeter(this.db, orgId, id);
    if (!row) throw errors.notFound(`Meter "${id}"`);
    return toMeter(row);
  }

  async list(orgId: string, filter: MeterFilter, page: Page): Promise<{ meters: Meter[]; total: number }> {
    const { rows, total } = await listMeters(this.db, orgId, withCanonicalUpdatedAfter(filter), page);
    return { meters: rows.map(toMeter), total };
  }

  async update(orgId: string, id: string, input: UpdateMeterInput, acceptedVersions?: number[]): Promise<Meter> {
    return writeOptimistically(this.db, {
      noun: 'Meter',
      id,
      acceptedVersions,
      read: (tx) => findMeter(tx, orgId, id),
      decide: async (tx, current) => {
        const next: MetersTable = { ...current };
        if (input.name !== undefined) next.name = input.name.trim();
        if (input.unit !== undefined) next.unit = input.unit.trim();
        if (input.assetId !== undefined && input.assetId !== current.asset_id) {
          if (input.assetId !== null) await assertAssetExists(tx, orgId, input.assetId);
          next.asset_id = input.assetId;
        }
        const before = toMeter(current);
        const after = toMeter(next);
        const changes: Partial<Record<keyof Meter, { from: unknown; to: unknown }>> = {};
        for (const field of REPORTED_FIELDS) if (before[field] !== after[field]) changes[field] = { from: before[field], to: after[field] };
        if (Object.keys(changes).length === 0) return { next: current };
        const now = isoNow(this.clock);
        next.updated_at = now;
        next.version = current.version + 1;
        const meter = toMeter(next);
        return { next, afterWrite: () => emitEvent(tx, { orgId, type: 'meter.updated', payload: { meterId: id, changes, meter }, occurredAt: now }).then(() => undefined) };
      },
      write: (tx, current, next) => {
        const { id: _id, org_id: _org, ...columns } = next;
        return updateMeterIfVersion(tx, orgId, id, current.version, columns);
      },
      present: toMeter,
    }).catch(translateWriteError);
  }

  /** Deletes a meter and its readings. */
  async delete(orgId: string, id: string, acceptedVersions?: number[]): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      // Locked: a readings batch running meanwhile finishes first, or finds the meter gone.
      const current = await findMeter(tx, orgId, id, true);
      if (!current) throw errors.notFound(`Meter "${id}"`);
      assertVersion(acceptedVersions, current.version, 'The meter');
      await deleteMeterWithReadings(tx, orgId, id);
      await emitEvent(tx, { orgId, type: 'meter.deleted', payload: { meterId: id, meter: toMeter(current) }, occurredAt: isoNow(this.clock) });
    });
  }

  async listReadings(orgId: string, id: string, page: Page): Promise<{ readings: MeterReading[]; total: number }> {
    if (!(await findMeter(this.db, orgId, id))) throw errors.notFound(`Meter "${id}"`);
    const { rows, total } = await listReadings(this.db, id, page);
    return { readings: rows.map(toReading), total };
  }

  /**
   * Stores a batch of readings in one transaction: duplicates (an externalId the meter already has,
   * or one met earlier in the batch) are reported and not stored; a cumulative meter's order is
   * checked against the stored readings around the batch (422 meter_decreased, nothing stored); the
   * meter's lastReading moves when a new reading is its latest by readAt; then the registered hooks
   * run, and `within` last.
   */
  async postReadings(orgId: string, id: string, input: PostReadingsInput, within?: InTransaction<PostReadingsAnswer>): Promise<PostReadingsAnswer> {
    return this.db
      .transaction()
      .execute(async (tx) => {
        const answer = await this.postReadingsInTransaction(tx, orgId, id, input);
        await within?.(tx, answer);
        return answer;
      })
      .catch((error: unknown) => {
        // Another batch stored the same externalId between our lookup and our insert (it cannot while the meter is locked; kept as a safety net).
        if (isUniqueViolation(error)) throw errors.conflict('Another request stored readings with the same externalId meanwhile; retry: they will be reported as duplicates.');
        throw error;
      });
  }

  /** postReadings inside a transaction the caller holds (a checklist's meter_reading answer). */
  async postReadingsInTransaction(tx: Tx, orgId: string, id: string, input: PostReadingsInput): Promise<PostReadingsAnswer> {
    const now = isoNow(this.clock);
    const latestAllowed = new Date(Date.parse(now) + MAX_READING_LEAD_MS).toISOString();
    const items = input.readings.map((item, index) => {
      const readAt = item.readAt === undefined ? now : canonicalInstant(item.readAt, `body.readings.${index}.readAt`);
      return { index, value: item.value, readAt, externalId: item.externalId ?? null, reset: item.reset ?? false };
    });
    const tooLate: FieldError[] = items
      .filter((item) => item.readAt > latestAllowed)
      .map((item) => ({ field: `body.readings.${item.index}.readAt`, message: `must not be more than 5 minutes ahead of the server’s clock (${now})` }));
    if (tooLate.length > 0) throw errors.unprocessable('A reading is dated in the future.', tooLate);

    const meterRow = await findMeter(tx, orgId, id, true);
    if (!meterRow) throw errors.notFound(`Meter "${id}"`);
    // Each new reading is built once as a row and once as the reading answered (and handed to the
    // hooks): a batch is 1,000 of them, and every extra copy showed up as garbage collection.
    // A repeat of an externalId met earlier in the batch points at that item (`firstOf`).
    const candidates: MeterReadingsTable[] = [];
    const candidateItems: number[] = [];
    const candidateReadings: MeterReading[] = [];
    const firstOf: number[] = [];
    const inBatch = new Map<string, number>();
    for (const item of items) {
      const earlier = item.externalId === null ? undefined : inBatch.get(item.externalId);
      if (earlier !== undefined) {
        firstOf.push(earlier);
        continue;
      }
      const row: MeterReadingsTable = {
        id: newId('meterReading'),
        org_id: orgId,
        meter_id: id,
        value: item.value,
        read_at: item.readAt,
        external_id: item.externalId,
        reset: item.reset ? 1 : 0,
        created_at: now,
      };
      if (row.external_id !== null) inBatch.set(row.external_id, candidates.length);
      firstOf.push(candidates.length);
      candidates.push(row);
      candidateItems.push(item.index);
      candidateReadings.push(toReading(row));
    }

    // Stored without looking first: the unique (meter, externalId) index leaves out an externalId the
    // meter already has, and only then are the stored ones read, to answer them as duplicates. A
    // lookup of every batch's externalIds cost PostgreSQL a scan of the meter's readings per batch.
    const storedCount = await insertReadings(tx, candidates);
    const storedBefore = new Map<number, MeterReadingsTable>();
    if (storedCount < candidates.length) {
      const ours = new Set(candidates.map((row) => row.id));
      const byExternalId = new Map(candidates.flatMap((row, c) => (row.external_id === null ? [] : [[row.external_id, c] as const])));
      const found = await findReadingsByExternalId(tx, id, [...byExternalId.keys()]);
      for (const row of found) if (!ours.has(row.id)) storedBefore.set(byExternalId.get(row.external_id!)!, row);
    }
    const outcomes: PostReadingsAnswer['readings'] = firstOf.map((c, i) => {
      const before = storedBefore.get(c);
      if (before) return { status: 'duplicate', reading: toReading(before) };
      return { status: candidateItems[c] === i ? 'accepted' : 'duplicate', reading: candidateReadings[c]! };
    });
    const fresh = storedBefore.size === 0 ? candidates : candidates.filter((_, c) => !storedBefore.has(c));
    const freshItems = storedBefore.size === 0 ? candidateItems : candidateItems.filter((_, c) => !storedBefore.has(c));
    const freshReadings = storedBefore.size === 0 ? candidateReadings : candidateReadings.filter((_, c) => !storedBefore.has(c));

    // After the insert: a refused batch is rolled back whole. The stored readings it is checked
    // against leave out its own (readingsAround reads the table, the batch now included).
    if (meterRow.kind === 'cumulative' && fresh.length > 0) await this.assertNoDecrease(tx, meterRow, fresh, freshItems);

    const accepted = freshReadings.sort(compareReadings);
    const latest = accepted.at(-1);
    let after = meterRow;
    if (latest && (meterRow.last_read_at === null || latest.readAt >= meterRow.last_read_at)) {
      const changes = { last_value: latest.value, last_read_at: latest.readAt, updated_at: now, version: meterRow.version + 1 };
      // The row is locked (PostgreSQL) or the writer is alone (SQLite): the version cannot have moved.
      if (!(await updateMeterIfVersion(tx, orgId, id, meterRow.version, changes))) throw errors.conflict(`Meter "${id}" changed meanwhile; retry.`);
      after = { ...meterRow, ...changes };
    }
    const meter = toMeter(after);
    if (accepted.length > 0) for (const hook of this.readingsHooks) await hook(tx, meter, accepted);

    return { accepted: fresh.length, duplicates: items.length - fresh.length, readings: outcomes, meter };
  }

  /** 422 meter_decreased naming each item of the batch that would make the cumulative meter go down. */
  private async assertNoDecrease(tx: Tx, meter: MetersTable, fresh: readonly MeterReadingsTable[], items: readonly number[]): Promise<void> {
    const batch: OrderedReading[] = fresh.map((row, i) => ({ id: row.id, value: row.value, readAt: row.read_at, reset: row.reset === 1, item: items[i] }));
    const first = batch.reduce((a, b) => (a.readAt <= b.readAt ? a : b)).readAt;
    const last = batch.reduce((a, b) => (a.readAt >= b.readAt ? a : b)).readAt;
    let stored: OrderedReading[];
    if (meter.last_read_at === null) stored = [];
    else if (first >= meter.last_read_at) {
      // The usual case, readings newer than any stored: the meter's own copy is the one before them.
      stored = [{ id: '', value: Number(meter.last_value), readAt: meter.last_read_at, reset: false }];
    } else {
      const own = new Set(fresh.map((row) => row.id));
      stored = (await readingsAround(tx, meter.id, first, last))
        .filter((row) => !own.has(row.id))
        .map((row) => ({ id: row.id, value: Number(row.value), readAt: row.read_at, reset: row.reset === 1 }));
    }
    const decreases = findDecreases(stored, batch);
    if (decreases.length === 0) return;
    const fieldErrors = decreases.map(({ item, side, neighbour }) => ({
      field: `body.readings.${item}.value`,
      message:
        side === 'below'
          ? `is lower than the reading before it (${neighbour.value} at ${neighbour.readAt}); send reset: true if the meter restarted its count`
          : `is higher than the reading after it (${neighbour.value} at ${neighbour.readAt}): a cumulative meter never goes down without a reset`,
    }));
    throw errors.meterDecreased(`A cumulative meter’s readings must not go down without reset: true; nothing of the batch was stored.`, fieldErrors);
  }
}

async function assertAssetExists(tx: Tx, orgId: string, assetId: string): Promise<void> {
  if (!(await findAsset(tx, orgId, assetId, true))) {
    throw errors.unprocessable('The meter refers to an asset that does not exist in your organization.', [
      { field: 'body.assetId', message: `no asset "${assetId}" exists in your organization` },
    ]);
  }
}

function translateWriteError(error: unknown): never {
  // The asset was deleted between our check and our write.
  if (isForeignKeyViolation(error)) {
    throw errors.unprocessable('The meter refers to an asset that does not exist in your organization.', [{ field: 'body.assetId', message: 'the asset was deleted meanwhile' }]);
  }
  throw error;
}
