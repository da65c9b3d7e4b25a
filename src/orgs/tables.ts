import type { Generated } from 'kysely';

/** Row types of this feature's tables (timestamps ISO 8601 UTC text, JSON columns serialized text; see src/db/tables.ts). */
export interface OrganizationsTable {
  id: string;
  name: string;
  /** ISO 4217 code of the organization's amounts (migration 0021; USD before it). */
  currency: Generated<string>;
  created_at: string;
}

declare module '../db/tables.js' {
  interface Tables {
    organizations: OrganizationsTable;
  }
}
