/** A custom field of an organization, on one entity; `key` and `type` never change. */
export interface CustomFieldsTable {
  id: string;
  org_id: string;
  /** record, asset, location or request. */
  entity: string;
  key: string;
  label: string;
  /** text, number, date, boolean or select. */
  type: string;
  /** JSON array of a select field's options; null for other types. */
  options: string | null;
  required: number;
  archived: number;
  created_at: string;
  updated_at: string;
  version: number;
}

/** Each value of a custom field once more, typed, for the lists' `cf.` filters (migration 0028). */
export interface CustomFieldValuesTable {
  entity_id: string;
  field_key: string;
  org_id: string;
  entity: string;
  /** text, select, date (YYYY-MM-DD) and boolean ('true'/'false') values. */
  text_value: string | null;
  number_value: number | null;
  /** The entity's createdAt: the lists' sort key, read from the index. */
  created_at: string;
}

/**
 * How many entities hold each exact value of a field (kept by triggers: migration 0030), keyed by
 * `text_value` or `number_value`, the other '' or 0. A `cf.<key>=value` list reads its total here.
 */
export interface CustomFieldValueCountsTable {
  org_id: string;
  entity: string;
  field_key: string;
  text_value: string;
  number_value: number;
  count: number;
}

/** PostgreSQL: changes to those counts, appended by the triggers and folded by `custom-field-count-fold`. */
export interface CustomFieldValueCountDeltasTable {
  org_id: string;
  entity: string;
  field_key: string;
  text_value: string;
  number_value: number;
  count_delta: number;
}

declare module '../db/tables.js' {
  interface Tables {
    custom_fields: CustomFieldsTable;
    custom_field_values: CustomFieldValuesTable;
    custom_field_value_counts: CustomFieldValueCountsTable;
    custom_field_value_count_deltas: CustomFieldValueCountDeltasTable;
  }
}
