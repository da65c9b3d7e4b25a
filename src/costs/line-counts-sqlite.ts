import { preparedQuery } from '../db/prepared.js';
import type { LineListSize } from './line-lists.js';

// SQLite: the counters are kept in place by the triggers of migration 0029 (one writer at a time).

const sqlitePostedSize = preparedQuery((db, p: { orgId: string; posted: number }) =>
  db.selectFrom('cost_line_counters').select(['lines', 'moves']).where('org_id', '=', p.orgId).where('posted', '=', p.posted),
);

const sqliteOrganizationSize = preparedQuery((db, p: { orgId: string }) =>
  db
    .selectFrom('cost_line_counters')
    .select((eb) => [eb.fn.coalesce(eb.fn.sum<number>('lines'), eb.lit(0)).as('lines'), eb.fn.coalesce(eb.fn.sum<number>('moves'), eb.lit(0)).as('moves')])
    .where('org_id', '=', p.orgId),
);

export const sqliteLineListSize: LineListSize = async (db, scope) =>
  (scope.posted === undefined ? await sqliteOrganizationSize(db, scope) : await sqlitePostedSize(db, { orgId: scope.orgId, posted: scope.posted })).rows[0];
