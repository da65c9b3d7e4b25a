import type { Db } from '../db/database.js';
import type { InTransaction } from '../idempotency/in-transaction.js';
import { writeOptimistically } from '../db/optimistic-write.js';
import { isUniqueViolation } from '../db/errors.js';
import { updateIfVersion } from '../db/versioned-rows.js';
import type { Page } from '../db/page.js';
import { errors } from '../errors.js';
import { newId } from '../ids.js';
import { isoNow, type Clock } from '../clock.js';
import type { CustomFieldsTable } from './tables.js';
import type { CreateCustomFieldInput, CustomField, UpdateCustomFieldInput } from './schemas.js';
import { findCustomField, insertCustomField, listCustomFields, toCustomField, type CustomFieldFilter } from './repository.js';

/** Custom-field definitions: a key and a type fixed for good, a label and options that may change. */
export class CustomFieldService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  async create(orgId: string, input: CreateCustomFieldInput, within?: InTransaction<CustomField>): Promise<CustomField> {
    if (input.type === 'select' && !input.options) throw errors.validation([{ field: 'body.options', message: 'is required for a select field' }]);
    if (input.type !== 'select' && input.options) throw errors.validation([{ field: 'body.options', message: 'is only for select fields' }]);
    const now = isoNow(this.clock);
    const row: CustomFieldsTable = {
      id: newId('customField'),
      org_id: orgId,
      entity: input.entity,
      key: input.key,
      label: input.label.trim(),
      type: input.type,
      options: input.options ? JSON.stringify(input.options) : null,
      required: input.required ? 1 : 0,
      archived: 0,
      created_at: now,
      updated_at: now,
      version: 1,
    };
    return this.db
      .transaction()
      .execute(async (tx) => {
        await insertCustomField(tx, row);
        const field = toCustomField(row);
        await within?.(tx, field);
        return field;
      })
      .catch((error: unknown) => {
        if (isUniqueViolation(error)) throw errors.alreadyExists(`A custom field "${input.key}" already exists on ${input.entity}; keys are unique per entity.`);
        throw error;
      });
  }

  async get(orgId: string, id: string): Promise<CustomField> {
    const row = await findCustomField(this.db, orgId, id);
    if (!row) throw errors.notFound(`Custom field "${id}"`);
    return toCustomField(row);
  }

  async list(orgId: string, filter: CustomFieldFilter, page: Page): Promise<{ customFields: CustomField[]; total: number }> {
    const { rows, total } = await listCustomFields(this.db, orgId, filter, page);
    return { customFields: rows.map(toCustomField), total };
  }

  async update(orgId: string, id: string, input: UpdateCustomFieldInput, acceptedVersions?: number[]): Promise<CustomField> {
    return writeOptimistically(this.db, {
      noun: 'Custom field',
      id,
      acceptedVersions,
      read: (tx) => findCustomField(tx, orgId, id),
      decide: async (_tx, current) => {
        // @NOTE: key, type and entity are what integrations and stored values rely on: never changed.
        if (input.type !== undefined && input.type !== current.type) throw errors.conflict(`Custom field "${current.key}" is a ${current.type} field; a field’s type never changes. Create a new field instead.`);
        if (input.key !== undefined && input.key !== current.key) throw errors.conflict(`Custom field "${current.key}" keeps its key for good; change its label instead.`);
        if (input.entity !== undefined && input.entity !== current.entity) throw errors.conflict(`Custom field "${current.key}" stays on ${current.entity}.`);
        const next: CustomFieldsTable = { ...current };
        if (input.label !== undefined) next.label = input.label.trim();
        if (input.required !== undefined) next.required = input.required ? 1 : 0;
        if (input.archived !== undefined) next.archived = input.archived ? 1 : 0;
        if (input.options !== undefined) {
          if (current.type !== 'select') throw errors.validation([{ field: 'body.options', message: 'is only for select fields' }]);
          const before = JSON.parse(current.options ?? '[]') as string[];
          const removed = before.filter((option) => !input.options!.includes(option));
          if (removed.length > 0) throw errors.conflict(`Options of a select field are never removed (stored values hold them): ${removed.map((o) => JSON.stringify(o)).join(', ')}.`);
          next.options = JSON.stringify(input.options);
        }
        const changed = (['label', 'required', 'archived', 'options'] as const).some((column) => next[column] !== current[column]);
        if (!changed) return { next: current };
        next.updated_at = isoNow(this.clock);
        next.version = current.version + 1;
        return { next };
      },
      write: (tx, current, next) => {
        const { id: _id, org_id: _org, ...columns } = next;
        return updateIfVersion(tx, 'custom_fields', orgId, id, current.version, columns);
      },
      present: toCustomField,
    });
  }
}
