import type { Executor } from '../db/database.js';
import type { Page } from '../db/page.js';
import { preparedQuery } from '../db/prepared.js';
import { findInOrganization } from '../db/versioned-rows.js';
import type { CustomFieldEntity, ValueOwner } from '../custom-field-values.js';
import type { CustomFieldsTable, CustomFieldValuesTable } from './tables.js';
import type { CustomField, CustomFieldListQuery, CustomFieldType } from './schemas.js';

export type CustomFieldFilter = Omit<CustomFieldListQuery, 'limit' | 'offset'>;

export function toCustomField(row: CustomFieldsTable): CustomField {
  return {
    id: row.id,
    key: row.key,
    label: row.label,
    entity: row.entity as CustomFieldEntity,
    type: row.type as CustomFieldType,
    ...(row.options !== null ? { options: JSON.parse(row.options) as string[] } : {}),
    required: row.required === 1,
    archived: row.archived === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    version: row.version,
  };
}

export function findCustomField(db: Executor, orgId: string, id: string): Promise<CustomFieldsTable | undefined> {
  return findInOrganization(db, 'custom_fields', orgId, id);
}

export async function insertCustomField(db: Executor, row: CustomFieldsTable): Promise<void> {
  await db.insertInto('custom_fields').values(row).execute();
}

// Every write of a work order, asset or location with custom fields reads these: compiled once.
const fieldsOfEntityQuery = preparedQuery((db, p: { orgId: string; entity: string }) =>
  db.selectFrom('custom_fields').selectAll().where('org_id', '=', p.orgId).where('entity', '=', p.entity),
);

/** The entity's fields (archived ones included: they keep their values), by key. */
export async function fieldsOfEntity(db: Executor, orgId: string, entity: CustomFieldEntity): Promise<Map<string, CustomField>> {
  const rows = (await fieldsOfEntityQuery(db, { orgId, entity })).rows;
  return new Map(rows.map((row) => [row.key, toCustomField(row)]));
}

/** Replaces the typed rows of `keys` of one entity by `rows` (a PATCH's changed values). */
export async function replaceValueRows(db: Executor, owner: ValueOwner, keys: readonly string[], rows: readonly CustomFieldValuesTable[]): Promise<void> {
  if (keys.length === 0) return;
  await db.deleteFrom('custom_field_values').where('entity_id', '=', owner.id).where('field_key', 'in', keys).execute();
  if (rows.length > 0) await db.insertInto('custom_field_values').values([...rows]).execute();
}

export async function listCustomFields(db: Executor, orgId: string, filter: CustomFieldFilter, page: Page): Promise<{ rows: CustomFieldsTable[]; total: number }> {
  let query = db.selectFrom('custom_fields').where('org_id', '=', orgId);
  if (filter.entity !== undefined) query = query.where('entity', '=', filter.entity);
  if (filter.archived !== undefined) query = query.where('archived', '=', filter.archived ? 1 : 0);
  const [rows, counted] = await Promise.all([
    query.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(counted.n) };
}
