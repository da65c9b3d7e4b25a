import type { Executor } from '../db/database.js';
import type { CustomFieldFilter } from '../custom-field-values.js';
import type { MatchingRecords } from './list-repository.js';
import type { WalkOrder } from '../db/list-pages.js';

/**
 * The organization's work orders a list with `cf.` filters starts from: those the first condition
 * matches, found in the (org_id, entity, field_key, value, created_at, id) index, then their rows by id
 * (CROSS JOIN keeps that order on SQLite, as for `assigneeId`); each further condition narrows by id.
 */
export function customFieldRecords(db: Executor, orgId: string, filters: readonly CustomFieldFilter[], base?: MatchingRecords): MatchingRecords {
  const [first, ...rest] = filters;
  let records =
    base ??
    (db
      .with('matched', () => first!.matching(db).clearSelect().select('custom_field_values.entity_id as cf_entity_id'))
      .selectFrom('matched')
      .crossJoin('records')
      .whereRef('records.id', '=', 'matched.cf_entity_id')
      .where('records.org_id', '=', orgId) as unknown as MatchingRecords);
  for (const filter of base ? filters : rest) records = records.where('records.id', 'in', filter.matching(db).clearSelect().select('custom_field_values.entity_id'));
  return records;
}

/** How many work orders one `cf.` range alone matches: counted in the index (an exact value's count is maintained: CustomFieldFilter.counted). */
export function customFieldTotal(db: Executor, filter: CustomFieldFilter) {
  return filter.matching(db).clearSelect().select((eb) => eb.fn.countAll<number>().as('n'));
}

/**
 * A page of a list by one `cf.` condition alone: ids and sort keys from the index (the window applied
 * there, in order for an exact value), then those rows by id. The caller applies no offset of its own.
 */
export function customFieldPageRecords(db: Executor, filter: CustomFieldFilter, window: { limit: number; offset: number }, order: WalkOrder): MatchingRecords {
  const direction = order === 'newest-first' ? 'desc' : 'asc';
  const ids = filter
    .matching(db)
    .clearSelect()
    .select(['custom_field_values.entity_id as record_id', 'custom_field_values.created_at as named_at'])
    .orderBy('named_at', direction)
    .orderBy('record_id', direction)
    .limit(window.limit)
    .offset(window.offset);
  return db.selectFrom(ids.as('page')).crossJoin('records').whereRef('records.id', '=', 'page.record_id') as unknown as MatchingRecords;
}
