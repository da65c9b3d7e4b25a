/** Row types of this feature's tables (timestamps ISO 8601 UTC text, JSON columns serialized text; see src/db/tables.ts). */
export interface CategoriesTable {
  id: string;
  org_id: string;
  name: string;
  description: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

declare module '../db/tables.js' {
  interface Tables {
    categories: CategoriesTable;
  }
}
