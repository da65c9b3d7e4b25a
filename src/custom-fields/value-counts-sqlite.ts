import { sql } from 'kysely';
import { preparedQuery } from '../db/prepared.js';
import type { ValueCount } from './value-counts.js';

// SQLite: the counts are kept in place by the triggers of migration 0030 (one writer at a time).

const countQuery = preparedQuery((db, p: { orgId: string; entity: string; key: string; textValue: string; numberValue: number }) =>
  db
    .selectFrom('custom_field_value_counts')
    .select('count')
    .where('org_id', '=', p.orgId)
    .where('entity', '=', p.entity)
    .where('field_key', '=', p.key)
    .where('text_value', '=', p.textValue)
    .where('number_value', '=', p.numberValue),
);

export const sqliteValueCount: ValueCount = {
  async read(db, value) {
    return Number((await countQuery(db, value)).rows[0]?.count ?? 0);
  },
  inStatement(p) {
    return sql<string>`coalesce((SELECT count FROM custom_field_value_counts
      WHERE org_id = ${p.orgId} AND entity = ${p.entity} AND field_key = ${p.key} AND text_value = ${p.textValue} AND number_value = ${p.numberValue}), 0)`;
  },
};
