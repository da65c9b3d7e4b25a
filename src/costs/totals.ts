import { formatMoney, parseMoney } from '../money/money.js';
import type { RecordsTable } from '../records/tables.js';
import type { WorkOrderCosts } from '../records/schemas.js';
import type { CostKind } from './schemas.js';

/** A work order's cost totals in minor units, and its labor minutes: the sums of its lines. */
export interface CostTotals {
  labor: bigint;
  parts: bigint;
  other: bigint;
  minutes: number;
  currency: string;
}

const BUCKET = { labor: 'labor', part: 'parts', other: 'other' } as const satisfies Record<CostKind, keyof WorkOrderCosts>;

/** The totals a work order carries (zero before its first line), read back exactly from its `costs`. */
export function totalsOf(record: Pick<RecordsTable, 'costs' | 'labor_minutes'>, currency: string): CostTotals {
  if (record.costs === null) return { labor: 0n, parts: 0n, other: 0n, minutes: Number(record.labor_minutes), currency };
  const costs = JSON.parse(record.costs) as WorkOrderCosts;
  const minor = (bucket: keyof WorkOrderCosts) => parseMoney(costs[bucket], { field: `costs.${bucket}`, currency: costs[bucket].currency, allowNegative: true }).minor;
  return { labor: minor('labor'), parts: minor('parts'), other: minor('other'), minutes: Number(record.labor_minutes), currency: costs.total.currency };
}

/** The totals with one line more (a negative amount and minutes for a reversal or a line taken off). */
export function withLine(totals: CostTotals, kind: CostKind, amountMinor: bigint, minutes = 0): CostTotals {
  const bucket = BUCKET[kind];
  return { ...totals, [bucket]: totals[bucket] + amountMinor, minutes: totals.minutes + minutes };
}

/** The work order's `costs` column: its Money totals as JSON, total = labor + parts + other. */
export function costsJson(totals: CostTotals): string {
  const { currency } = totals;
  const costs: WorkOrderCosts = {
    labor: formatMoney({ minor: totals.labor, currency }),
    parts: formatMoney({ minor: totals.parts, currency }),
    other: formatMoney({ minor: totals.other, currency }),
    total: formatMoney({ minor: totals.labor + totals.parts + totals.other, currency }),
  };
  return JSON.stringify(costs);
}
