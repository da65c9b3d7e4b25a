import type { Executor, Tx } from '../db/database.js';
import type { RowAppends } from '../db/row-appends.js';
import { errors, type FieldError } from '../errors.js';
import type { CountedTotal, CustomFieldChecks, CustomFieldCondition, CustomFieldEntity, CustomFieldMap, CustomFieldValue, MatchingEntities, ValueOwner } from '../custom-field-values.js';
import type { CustomFieldValuesTable } from './tables.js';
import { fieldsOfEntity, replaceValueRows } from './repository.js';
import type { CustomField } from './schemas.js';
import { countedValue, type ValueCount } from './value-counts.js';

const DATE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;
const RANGE_OPERATORS = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

/** Why `value` does not fit `field`, or undefined when it does. */
export function valueProblem(field: CustomField, value: unknown): string | undefined {
  switch (field.type) {
    case 'text':
      return typeof value === 'string' && value.trim().length > 0 && value.length <= 1000 ? undefined : 'must be a non-blank string of at most 1000 characters';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : 'must be a number';
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'date':
      return typeof value === 'string' && DATE.test(value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) ? undefined : 'must be a date written YYYY-MM-DD';
    case 'select':
      return typeof value === 'string' && (field.options ?? []).includes(value) ? undefined : `must be one of ${(field.options ?? []).map((o) => JSON.stringify(o)).join(', ')}`;
  }
}

/** The typed row a value is filtered by. */
function valueRow(entity: CustomFieldEntity, owner: ValueOwner, field: CustomField, value: CustomFieldValue): CustomFieldValuesTable {
  const numeric = field.type === 'number';
  return {
    entity_id: owner.id,
    field_key: field.key,
    org_id: owner.orgId,
    entity,
    text_value: numeric ? null : String(value),
    number_value: numeric ? (value as number) : null,
    created_at: owner.createdAt,
  };
}

/**
 * Checks `values` against the entity's fields: every key a field, every value of its type, none for
 * an archived field, every required field set (`stored` are the values a PATCH leaves in place).
 */
function checkedValues(fields: Map<string, CustomField>, stored: CustomFieldMap, patch: Record<string, CustomFieldValue | null>): CustomFieldMap {
  const problems: FieldError[] = [];
  const next: CustomFieldMap = { ...stored };
  for (const [key, value] of Object.entries(patch)) {
    const field = fields.get(key);
    const where = `body.customFields.${key}`;
    if (!field) problems.push({ field: where, message: 'is not a custom field of your organization' });
    else if (value === null) delete next[key];
    else if (field.archived) problems.push({ field: where, message: 'is archived: it keeps its values and takes no new ones' });
    else {
      const problem = valueProblem(field, value);
      if (problem) problems.push({ field: where, message: problem });
      else next[key] = value;
    }
  }
  for (const field of fields.values()) {
    if (field.required && !field.archived && next[field.key] === undefined) problems.push({ field: `body.customFields.${field.key}`, message: 'is required' });
  }
  if (problems.length > 0) {
    const first = problems[0]!.field.slice('body.customFields.'.length);
    throw errors.customFieldInvalid(`Custom field "${first}" ${problems[0]!.message}.`, problems);
  }
  // Keys in a stable order, so equal values are equal text.
  return Object.fromEntries(Object.entries(next).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The custom-fields feature's checks and filters, plugged into work orders, assets and locations. */
export class CustomFieldValueChecks implements CustomFieldChecks {
  constructor(
    /** The maintained count of one exact value, on this database (value-counts-sqlite.ts, value-counts-postgres.ts). */
    private readonly valueCount: ValueCount,
  ) {}

  async created(executor: Executor, entity: CustomFieldEntity, owner: ValueOwner, values: Record<string, CustomFieldValue | null> | undefined, appends: RowAppends): Promise<string> {
    const fields = await fieldsOfEntity(executor, owner.orgId, entity);
    if (fields.size === 0 && Object.keys(values ?? {}).length === 0) return '{}';
    const checked = checkedValues(fields, {}, values ?? {});
    const rows = Object.entries(checked).map(([key, value]) => valueRow(entity, owner, fields.get(key)!, value));
    if (rows.length > 0) appends.add('custom_field_values', ...rows);
    return JSON.stringify(checked);
  }

  async changed(tx: Tx, entity: CustomFieldEntity, owner: ValueOwner, storedJson: string, patch: Record<string, CustomFieldValue | null>): Promise<{ json: string; write: () => Promise<void> }> {
    const fields = await fieldsOfEntity(tx, owner.orgId, entity);
    const checked = checkedValues(fields, JSON.parse(storedJson) as CustomFieldMap, patch);
    const json = JSON.stringify(checked);
    const changedKeys = Object.keys(patch);
    const rows = changedKeys.filter((key) => checked[key] !== undefined).map((key) => valueRow(entity, owner, fields.get(key)!, checked[key]!));
    return { json, write: () => replaceValueRows(tx, owner, changedKeys, rows) };
  }

  async conditions(executor: Executor, orgId: string, entity: CustomFieldEntity, query: Readonly<Record<string, unknown>>): Promise<CustomFieldCondition[]> {
    const names = Object.keys(query);
    if (names.length === 0) return [];
    const fields = await fieldsOfEntity(executor, orgId, entity);
    const conditions: CustomFieldCondition[] = [];
    for (const name of names) {
      const match = /^cf\.([^[]+)(?:\[(gt|gte|lt|lte)\])?$/.exec(name);
      const field = match && fields.get(match[1]!);
      const where = `querystring.${name}`;
      if (!match || !field) throw errors.validation([{ field: where, message: 'is not a custom field of your organization' }]);
      const raw = String(query[name]);
      const range = match[2] as keyof typeof RANGE_OPERATORS | undefined;
      if (range && field.type !== 'number' && field.type !== 'date') throw errors.validation([{ field: where, message: `takes no range: ${field.type} fields filter by exact value only` }]);
      const value = field.type === 'number' ? Number(raw) : field.type === 'boolean' ? (raw === 'true' || raw === 'false' ? raw : undefined) : raw;
      const problem = value === undefined || (field.type === 'number' && (raw.trim() === '' || !Number.isFinite(value))) ? 'must be a value of the field’s type' : valueProblem(field, field.type === 'boolean' ? raw === 'true' : value);
      if (problem) throw errors.validation([{ field: where, message: problem }]);
      conditions.push({ key: field.key, column: field.type === 'number' ? 'number_value' : 'text_value', operator: range ? RANGE_OPERATORS[range] : '=', value: value! });
    }
    return conditions;
  }

  matching(executor: Executor, orgId: string, entity: CustomFieldEntity, condition: CustomFieldCondition): MatchingEntities {
    return executor
      .selectFrom('custom_field_values')
      .select(['custom_field_values.entity_id', 'custom_field_values.created_at'])
      .where('custom_field_values.org_id', '=', orgId)
      .where('custom_field_values.entity', '=', entity)
      .where('custom_field_values.field_key', '=', condition.key)
      .where(`custom_field_values.${condition.column}`, condition.operator, condition.value);
  }

  counted(orgId: string, entity: CustomFieldEntity, condition: CustomFieldCondition): CountedTotal {
    const value = countedValue(orgId, entity, condition);
    return { value, read: (executor) => this.valueCount.read(executor, value), inStatement: (counted) => this.valueCount.inStatement(counted) };
  }
}
