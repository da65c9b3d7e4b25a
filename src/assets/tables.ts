/** Row types of this feature's tables (timestamps ISO 8601 UTC text, JSON columns serialized text; see src/db/tables.ts). */
/** A piece of equipment work orders are raised against. `tag` is unique within the organization. */
export interface AssetsTable {
  id: string;
  org_id: string;
  name: string;
  name_search: string;
  tag: string;
  tag_search: string;
  serial_number: string | null;
  manufacturer: string | null;
  model: string | null;
  /** ACTIVE, INACTIVE or RETIRED. */
  status: string;
  location_id: string | null;
  external_ref: string | null;
  /** JSON object. */
  metadata: string;
  retired_at: string | null;
  created_at: string;
  updated_at: string;
  version: number;
  /** Custom-field values (JSON `{key: value}`); '{}' for none (migration 0023). */
  custom_fields: string;
}

declare module '../db/tables.js' {
  interface Tables {
    assets: AssetsTable;
  }
}
