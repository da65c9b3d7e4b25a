import type { RawBuilder } from 'kysely';
import type { Executor } from '../db/database.js';
import type { CountedValue, CustomFieldCondition, CustomFieldEntity } from '../custom-field-values.js';

export type { CountedValue };

/**
 * How many entities hold one exact value. One per database: value-counts-sqlite.ts (counted in
 * place), value-counts-postgres.ts (counts plus unfolded deltas).
 */
export interface ValueCount {
  /** Read in `db`'s snapshot, by a statement compiled once. */
  read(db: Executor, value: CountedValue): Promise<number>;
  /** As a scalar expression of a statement that reads something else in the same snapshot (a list's first page). */
  inStatement(value: CountedValue): RawBuilder<string>;
}

export function countedValue(orgId: string, entity: CustomFieldEntity, condition: CustomFieldCondition): CountedValue {
  const numeric = condition.column === 'number_value';
  return { orgId, entity, key: condition.key, textValue: numeric ? '' : String(condition.value), numberValue: numeric ? Number(condition.value) : 0 };
}
