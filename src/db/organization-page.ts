import type { Kysely, Selectable } from 'kysely';
import type { Executor } from './database.js';
import type { Tables } from './tables.js';
import type { Page } from './page.js';

/** Small per-organization collections listed newest first (ties by id) with an exact COUNT(*) total. */
export type SmallCollection = 'categories' | 'webhook_subscriptions';

type Row = { id: string; org_id: string; created_at: string; updated_at: string };

/**
 * One page of an organization's rows and the exact total; for collections small enough to count.
 * `updatedAfter` (canonical, see withCanonicalUpdatedAfter) keeps rows changed at or after it.
 */
export async function organizationPage<T extends SmallCollection>(
  db: Executor,
  table: T,
  orgId: string,
  page: Page,
  filter: { updatedAfter?: string | undefined } = {},
): Promise<{ rows: Selectable<Tables[T]>[]; total: number }> {
  // Kysely cannot narrow a union of table names in one builder chain; the signature keeps callers typed.
  const untyped = db as unknown as Kysely<Record<SmallCollection, Row>>;
  const inOrganization = untyped
    .selectFrom(table as SmallCollection)
    .where('org_id', '=', orgId)
    .$if(filter.updatedAfter !== undefined, (q) => q.where('updated_at', '>=', filter.updatedAfter!));
  const rows = await inOrganization
    .selectAll()
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  const { n } = await inOrganization.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return { rows: rows as unknown as Selectable<Tables[T]>[], total: Number(n) };
}
