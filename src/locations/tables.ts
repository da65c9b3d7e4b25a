/** Row types of this feature's tables (timestamps ISO 8601 UTC text, JSON columns serialized text; see src/db/tables.ts). */
/** A place: site, building, floor, room… `parent_id` makes the hierarchy, never a cycle. */
export interface LocationsTable {
  id: string;
  org_id: string;
  parent_id: string | null;
  name: string;
  /** `name` lower-cased by the application: the column text search runs on. */
  name_search: string;
  address: string | null;
  latitude: number | null;
  longitude: number | null;
  external_ref: string | null;
  /** JSON object. */
  metadata: string;
  created_at: string;
  updated_at: string;
  version: number;
  /** Custom-field values (JSON `{key: value}`); '{}' for none (migration 0023). */
  custom_fields: string;
}

declare module '../db/tables.js' {
  interface Tables {
    locations: LocationsTable;
  }
}
