import { Type } from '@sinclair/typebox';
import type { RawBuilder, SelectQueryBuilder } from 'kysely';
import type { Executor, Tx } from './db/database.js';
import type { RowAppends } from './db/row-appends.js';
import type { Tables } from './db/tables.js';
import { errors } from './errors.js';

// How the resources that carry `customFields` (work orders, assets, locations) have them checked and
// filtered, without knowing the custom-fields feature, which is built after them and plugs itself in
// (src/custom-fields/feature.ts), as the people feature does with assignees.

export const CUSTOM_FIELD_ENTITIES = ['record', 'asset', 'location', 'request'] as const;
export type CustomFieldEntity = (typeof CUSTOM_FIELD_ENTITIES)[number];

/** One custom-field value: text, select and date as strings, number, boolean. */
export type CustomFieldValue = string | number | boolean;
export type CustomFieldMap = Record<string, CustomFieldValue>;

/**
 * `customFields` in a response: a map whose keys are the organization's own (GET /custom-fields).
 * A type list rather than `anyOf`: the response serializer validates each branch of an `anyOf`.
 */
export const CustomFieldsSchema = Type.Unsafe<CustomFieldMap>({
  type: 'object',
  additionalProperties: { type: ['string', 'number', 'boolean'] },
  description:
    'The organization’s custom fields (GET /custom-fields) by `key`: text, select and date (`YYYY-MM-DD`) as strings, numbers, booleans. `{}` when none is set.',
});

/** `customFields` in a create or PATCH body: in a PATCH, null removes a value and keys left out stay as they are. */
export const CustomFieldsInput = Type.Unsafe<Record<string, CustomFieldValue | null>>({
  type: 'object',
  additionalProperties: { type: ['string', 'number', 'boolean', 'null'] },
  maxProperties: 100,
  description:
    'Values of the organization’s custom fields by `key`, each checked against its field (422 `custom_field_invalid` naming it). In a PATCH, keys left out keep their value and null removes one.',
});

/** A `cf.<key>` filter of a list, read against the field's type. */
export interface CustomFieldCondition {
  key: string;
  column: 'text_value' | 'number_value';
  operator: '=' | '>' | '>=' | '<' | '<=';
  value: string | number;
}

/** The ids and sort keys of the entities a condition matches, from the typed side table's index. */
export type MatchingEntities = SelectQueryBuilder<Tables, 'custom_field_values', { entity_id: string; created_at: string }>;

/** A list's `cf.` filter: its condition, and the entities it matches from the typed values' index. */
export interface CustomFieldFilter {
  condition: CustomFieldCondition;
  matching: (db: Executor) => MatchingEntities;
  /** The same for any condition on the same entity: for a statement compiled once with the condition's values as parameters. */
  matchingOf: (db: Executor, orgId: string, condition: CustomFieldCondition) => MatchingEntities;
  /** An exact condition's: how many entities it matches, from the maintained counts instead of the index (undefined for a range). */
  counted?: CountedTotal;
}

/** One exact value of a field as custom_field_value_counts keys it (migration 0030): the other column '' or 0. */
export interface CountedValue {
  orgId: string;
  entity: string;
  key: string;
  textValue: string;
  numberValue: number;
}

/** How many entities hold one exact value, from the counts migration 0030 keeps, read in the caller's snapshot. */
export interface CountedTotal {
  /** The value counted, as the counts key it. */
  value: CountedValue;
  /** On its own, in `executor`'s snapshot. */
  read(executor: Executor): Promise<number>;
  /**
   * The count of `value` (this one, or placeholders of a statement compiled once: preparedQuery) as a
   * scalar expression of a statement that reads the page too (one snapshot, one round trip).
   */
  inStatement(value: CountedValue): RawBuilder<string>;
}

/** A list's `cf.` parameters as filters (none when there are none): read once per request, against the fields of now. */
export async function customFieldFilters(checks: CustomFieldChecks, db: Executor, orgId: string, entity: CustomFieldEntity, query: Record<string, unknown>): Promise<CustomFieldFilter[] | undefined> {
  if (Object.keys(query).length === 0) return undefined;
  const conditions = await checks.conditions(db, orgId, entity, query);
  return conditions.map((condition) => ({
    condition,
    matching: (executor: Executor) => checks.matching(executor, orgId, entity, condition),
    matchingOf: (executor: Executor, ofOrg: string, other: CustomFieldCondition) => checks.matching(executor, ofOrg, entity, other),
    ...(condition.operator === '=' ? { counted: checks.counted(orgId, entity, condition) } : {}),
  }));
}

/** The ids of the entities every filter matches, for a list's `WHERE id IN (…)`. */
export function narrowByCustomFields<Q extends { where: (...args: never[]) => unknown }>(db: Executor, query: Q, column: string, filters: readonly CustomFieldFilter[] | undefined): Q {
  let narrowed = query as unknown as { where: (column: string, operator: 'in', values: unknown) => unknown };
  for (const filter of filters ?? []) narrowed = narrowed.where(column, 'in', filter.matching(db).clearSelect().select('custom_field_values.entity_id')) as typeof narrowed;
  return narrowed as unknown as Q;
}

/** What the custom-fields feature provides to the resources that carry values. */
export interface CustomFieldChecks {
  /**
   * Checks a new entity's values and adds their typed rows to `appends`; answers the JSON to store.
   * Reads through `executor`, which may be the database itself (a create in one statement).
   */
  created(executor: Executor, entity: CustomFieldEntity, owner: ValueOwner, values: Record<string, CustomFieldValue | null> | undefined, appends: RowAppends): Promise<string>;
  /** Checks a PATCH's values against the stored ones; answers the JSON to store and the write of the typed rows. */
  changed(tx: Tx, entity: CustomFieldEntity, owner: ValueOwner, storedJson: string, patch: Record<string, CustomFieldValue | null>): Promise<{ json: string; write: () => Promise<void> }>;
  /** The conditions of a list's `cf.` parameters (400 for an unknown key or a value that is not of the field's type). */
  conditions(executor: Executor, orgId: string, entity: CustomFieldEntity, query: Readonly<Record<string, unknown>>): Promise<CustomFieldCondition[]>;
  /** The entities one condition matches, for a list to drive from. */
  matching(executor: Executor, orgId: string, entity: CustomFieldEntity, condition: CustomFieldCondition): MatchingEntities;
  /** How many entities hold an exact condition's value, from the counts migration 0030 keeps. */
  counted(orgId: string, entity: CustomFieldEntity, condition: CustomFieldCondition): CountedTotal;
}

export interface ValueOwner {
  orgId: string;
  id: string;
  createdAt: string;
}

/** Until the custom-fields feature plugs in: no field exists, so only `{}` is a valid value. */
export const NO_CUSTOM_FIELDS: CustomFieldChecks = {
  async created(_executor, _entity, _owner, values) {
    const keys = Object.keys(values ?? {});
    if (keys.length > 0) throw errors.customFieldInvalid(`No custom field "${keys[0]}" exists.`, [{ field: `body.customFields.${keys[0]}`, message: 'is not a custom field of your organization' }]);
    return '{}';
  },
  async changed(_tx, _entity, _owner, storedJson, patch) {
    const keys = Object.keys(patch);
    if (keys.length > 0) throw errors.customFieldInvalid(`No custom field "${keys[0]}" exists.`, [{ field: `body.customFields.${keys[0]}`, message: 'is not a custom field of your organization' }]);
    return { json: storedJson, write: async () => undefined };
  },
  async conditions(_executor, _orgId, _entity, query) {
    const key = Object.keys(query).find((name) => name.startsWith('cf.'));
    if (key !== undefined) throw errors.validation([{ field: `querystring.${key}`, message: 'is not a custom field of your organization' }]);
    return [];
  },
  matching() {
    throw new Error('no custom field exists to match');
  },
  counted() {
    throw new Error('no custom field exists to count');
  },
};

/** Query-string names of the `cf.` filters: `cf.<key>` (exact) and `cf.<key>[gt|gte|lt|lte]` (ranges). */
export const CUSTOM_FIELD_FILTER_PATTERN = '^cf\\.[a-z][a-z0-9_]{0,39}(\\[(gt|gte|lt|lte)\\])?$';

/** What a list's description says of its `cf.` filters (the document cannot list the organization's own keys as parameters). */
export const CUSTOM_FIELD_FILTERS_DOC =
  ' Custom fields filter too: `cf.<key>=value` is exact (text, select, boolean `true`/`false`, number, date `YYYY-MM-DD`); number and date fields take ranges, `cf.<key>[gt|gte|lt|lte]=value`, and several conditions all apply. An unknown key, or a value not of its field’s type, is 400. See docs/custom-fields.md.';

/** The `patternProperties` a list's query schema adds for the `cf.` filters. */
export const CUSTOM_FIELD_FILTERS = { [CUSTOM_FIELD_FILTER_PATTERN]: { type: 'string', maxLength: 200 } } as const;

/** The `cf.` parameters of a query, apart from the list's own filters. */
export function splitCustomFieldFilters<Q extends Record<string, unknown>>(query: Q): { filter: Q; customFields: Record<string, unknown> } {
  const filter = {} as Record<string, unknown>;
  const customFields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(query)) (name.startsWith('cf.') ? customFields : filter)[name] = value;
  return { filter: filter as Q, customFields };
}
