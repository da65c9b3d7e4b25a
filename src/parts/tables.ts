/** A part kept in stock; its price is `unit_cost_minor` minor units of `currency` (the organization's). */
export interface PartsTable {
  id: string;
  org_id: string;
  sku: string;
  name: string;
  unit: string;
  unit_cost_minor: number | string;
  currency: string;
  /** Thousandths of the unit; null: no reorder point. */
  reorder_point_milli: number | string | null;
  active: number;
  created_at: string;
  updated_at: string;
  version: number;
}

/** On hand of a part at one location, in thousandths, kept in step with the ledger in each movement's transaction. */
export interface PartStockTable {
  part_id: string;
  location_id: string;
  org_id: string;
  on_hand_milli: number | string;
  /** 1 while on hand is below the part's reorder point (part.below_reorder_point fires on the way down, once). */
  below_reorder: number;
  updated_at: string;
}

/** One row of the append-only ledger: a receipt, adjustment, transfer, issue or return. */
export interface StockMovementsTable {
  id: string;
  org_id: string;
  part_id: string;
  type: string;
  location_id: string;
  to_location_id: string | null;
  /** Thousandths; signed for an adjustment, positive for every other type. */
  quantity_milli: number | string;
  unit_cost_minor: number | string;
  currency: string;
  record_id: string | null;
  cost_line_id: string | null;
  note: string | null;
  created_at: string;
}

declare module '../db/tables.js' {
  interface Tables {
    parts: PartsTable;
    part_stock: PartStockTable;
    stock_movements: StockMovementsTable;
  }
}
