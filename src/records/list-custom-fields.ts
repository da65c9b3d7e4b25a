import type { Executor } from '../db/database.js';
import type { QueryResult, RawBuilder } from 'kysely';
import type { CustomFieldFilter, MatchingEntities } from '../custom-field-values.js';
import { preparedQuery } from '../db/prepared.js';
import type { MatchingRecords, PageQuery, RowForm } from './list-repository.js';
import type { PageWalk, WalkOrder } from '../db/list-pages.js';

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
export function customFieldPageRecords(db: Executor, matching: MatchingEntities, window: { limit: number | RawBuilder<number>; offset: number }, order: WalkOrder): MatchingRecords {
  const direction = order === 'newest-first' ? 'desc' : 'asc';
  const ids = matching
    .clearSelect()
    .select(['custom_field_values.entity_id as record_id', 'custom_field_values.created_at as named_at'])
    .orderBy('named_at', direction)
    .orderBy('record_id', direction)
    .limit(window.limit)
    .offset(window.offset);
  return db.selectFrom(ids.as('page')).crossJoin('records').whereRef('records.id', '=', 'page.record_id') as unknown as MatchingRecords;
}

type CustomFieldWindow = { orgId: string; key: string; value: string | number; limit: number; offset: number };
type CustomFieldPage = (db: Executor, params: CustomFieldWindow) => Promise<QueryResult<unknown>>;

/**
 * Pages of lists by one exact `cf.` value alone, compiled once per value column, row form and walking
 * order (preparedQuery), the key, value and window as parameters: building and compiling them
 * through Kysely on every request cost about as much as running them. The condition's `matchingOf`
 * is the custom-fields feature's for work orders, the same for every filter of a records list.
 */
export class CustomFieldPages {
  private readonly pages = new Map<string, CustomFieldPage>();
  constructor(private readonly pageQuery: PageQuery) {}

  read(db: Executor, orgId: string, filter: CustomFieldFilter, walk: PageWalk, form: RowForm): Promise<QueryResult<unknown>> {
    const { column, value, key } = filter.condition;
    const shape = `${column} ${form} ${walk.order}`;
    let page = this.pages.get(shape);
    if (!page) {
      page = preparedQuery((executor, p: CustomFieldWindow) => {
        const matching = filter.matchingOf(executor, p.orgId, { key: p.key, column, operator: '=', value: p.value });
        return this.pageQuery(executor, customFieldPageRecords(executor, matching, p, walk.order), { order: walk.order, limit: p.limit, offset: 0 }, form);
      });
      this.pages.set(shape, page);
    }
    return page(db, { orgId, key, value, limit: walk.limit, offset: walk.offset });
  }
}
