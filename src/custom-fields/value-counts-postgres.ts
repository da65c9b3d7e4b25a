import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/database.js';
import { preparedQuery } from '../db/prepared.js';
import type { CountedValue, ValueCount } from './value-counts.js';
import { foldDeltas, type FoldLock } from '../db/postgres/delta-folds.js';

/** The folded count and the deltas not folded yet, summed in one expression (one snapshot), as postgresTotal does for work orders. */
function summedCount(p: CountedValue): RawBuilder<string> {
  const ofValue = sql`org_id = ${p.orgId} AND entity = ${p.entity} AND field_key = ${p.key} AND text_value = ${p.textValue} AND number_value = ${p.numberValue}::double precision`;
  return sql<string>`(SELECT coalesce(sum(n), 0) FROM (
      SELECT count AS n FROM custom_field_value_counts WHERE ${ofValue}
      UNION ALL SELECT count_delta FROM custom_field_value_count_deltas WHERE ${ofValue}) AS counted)`;
}

const countQuery = preparedQuery((db, p: CountedValue) => db.selectNoFrom(summedCount(p).as('n')));

export const postgresValueCount: ValueCount = {
  async read(db, value) {
    return Number((await countQuery(db, value)).rows[0]?.n ?? 0);
  },
  inStatement: summedCount,
};

// Class id and key of the transaction-scoped advisory lock that keeps folds from running side by side.
const FOLD_LOCK: FoldLock = [0x574f, 0x43465643]; // "WO", "CFVC"

/**
 * PostgreSQL: moves every committed custom-field count delta into its count row, in one transaction,
 * so readers see the same sum before and after; one fold at a time (advisory lock), as
 * foldRecordCountDeltas does for work orders. Returns how many deltas it folded.
 */
export function foldCustomFieldCountDeltas(db: Db): Promise<number> {
  return foldDeltas(
    db,
    FOLD_LOCK,
    sql<{ deltas: string }>`
      WITH folded AS (DELETE FROM custom_field_value_count_deltas RETURNING org_id, entity, field_key, text_value, number_value, count_delta),
      sums AS (
        SELECT org_id, entity, field_key, text_value, number_value, sum(count_delta) AS count, count(*) AS deltas
        FROM folded GROUP BY org_id, entity, field_key, text_value, number_value
      ),
      applied AS (
        INSERT INTO custom_field_value_counts (org_id, entity, field_key, text_value, number_value, count)
        SELECT org_id, entity, field_key, text_value, number_value, count FROM sums ORDER BY org_id, entity, field_key, text_value, number_value
        ON CONFLICT (org_id, entity, field_key, text_value, number_value) DO UPDATE SET count = custom_field_value_counts.count + excluded.count
      )
      SELECT coalesce(sum(deltas), 0) AS deltas FROM sums`,
  );
}
