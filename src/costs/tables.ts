/**
 * One cost line of a work order: labor (`lab_`), a part used (`pln_`) or another cost (`cst_`), with
 * the columns of the other kinds null. Amounts are whole minor units of `currency`; a reversing line
 * (`reverses_id`) carries the negated amount, minutes and quantity of the line it reverses.
 */
export interface CostLinesTable {
  id: string;
  org_id: string;
  record_id: string;
  kind: string;
  description: string;
  amount_minor: number | string;
  currency: string;
  reverses_id: string | null;
  /** 1 once posted to the ERP: the line is frozen from then on. */
  posted: number;
  posted_at: string | null;
  erp_document_id: string | null;
  person_id: string | null;
  minutes: number | null;
  started_at: string | null;
  ended_at: string | null;
  rate_minor: number | string | null;
  labor_category: string | null;
  note: string | null;
  part_id: string | null;
  location_id: string | null;
  quantity_milli: number | string | null;
  unit_cost_minor: number | string | null;
  movement_id: string | null;
  vendor_id: string | null;
  invoice_ref: string | null;
  attachment_id: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * Per organization and `posted`, how many cost lines there are and how often one left the list or
 * moved in it (kept by triggers: migration 0029). GET /cost-lines reads its totals here.
 */
export interface CostLineCountersTable {
  org_id: string;
  posted: number;
  lines: number | string;
  moves: number | string;
}

declare module '../db/tables.js' {
  interface Tables {
    cost_lines: CostLinesTable;
    cost_line_counters: CostLineCountersTable;
  }
}
