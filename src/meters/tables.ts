/**
 * A meter of an organization, optionally on an asset. `last_value`/`last_read_at` copy its reading
 * with the latest `read_at` (both null before the first one), kept in the readings' transaction.
 */
export interface MetersTable {
  id: string;
  org_id: string;
  asset_id: string | null;
  name: string;
  unit: string;
  /** cumulative or gauge; never changes. */
  kind: string;
  last_value: number | null;
  last_read_at: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

/** One reading of a meter; `external_id` is the client's, unique per meter when given. */
export interface MeterReadingsTable {
  id: string;
  org_id: string;
  meter_id: string;
  value: number;
  read_at: string;
  external_id: string | null;
  /** 1 when the reading restarts a cumulative meter's count (it may be lower than the one before). */
  reset: number;
  created_at: string;
}

declare module '../db/tables.js' {
  interface Tables {
    meters: MetersTable;
    meter_readings: MeterReadingsTable;
  }
}
