import type { Executor } from '../db/database.js';
import type { Page } from '../db/page.js';
import { IN_ORGANIZATION } from '../db/organization-check.js';
import { takesRowLocks } from '../db/row-locks.js';
import { containsText } from '../db/text-search.js';
import { formatMoney, minorUnitsOf } from '../money/money.js';
import type { PeopleTable, TeamsTable, VendorsTable } from './tables.js';
import type { DirectoryFilter, Person, Team, Vendor } from './schemas.js';

/** The directory's three tables; people and vendors share their contact columns. */
export type DirectoryTable = 'people' | 'teams' | 'vendors';
type Rows = { people: PeopleTable; teams: TeamsTable; vendors: VendorsTable };

export function toPerson(row: PeopleTable): Person {
  const rate = row.hourly_rate_minor === null || row.hourly_rate_currency === null ? null : formatMoney({ minor: minorUnitsOf(row.hourly_rate_minor), currency: row.hourly_rate_currency });
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    phone: row.phone,
    externalRef: row.external_ref,
    trades: JSON.parse(row.trades) as string[],
    hourlyRate: rate,
    active: Boolean(row.active),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    version: row.version,
  };
}

export function toVendor(row: VendorsTable): Vendor {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    phone: row.phone,
    trades: JSON.parse(row.trades) as string[],
    externalRef: row.external_ref,
    active: Boolean(row.active),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    version: row.version,
  };
}

export function toTeam(row: TeamsTable, memberIds: string[]): Team {
  return { id: row.id, name: row.name, memberIds, active: Boolean(row.active), createdAt: row.created_at, updatedAt: row.updated_at, version: row.version };
}

/**
 * The organization's row, or undefined. `lock`: on PostgreSQL, `share` keeps it from being changed or
 * deleted until the caller's transaction ends (an assignment naming it); `update` waits for those
 * and holds off new ones (a delete, which then checks for work orders naming it).
 */
export async function findEntry<T extends DirectoryTable>(db: Executor, table: T, orgId: string, id: string, lock?: 'share' | 'update'): Promise<Rows[T] | undefined> {
  let query = (db as Executor).selectFrom(table as 'people').selectAll().where('id', '=', id).where('org_id', IN_ORGANIZATION, orgId);
  if (lock && takesRowLocks(db)) query = lock === 'share' ? query.forShare() : query.forUpdate();
  return (await query.executeTakeFirst()) as Rows[T] | undefined;
}

export async function insertEntry<T extends DirectoryTable>(db: Executor, table: T, row: Rows[T]): Promise<void> {
  await db.insertInto(table as 'people').values(row as PeopleTable).execute();
}

export async function deleteEntry(db: Executor, table: DirectoryTable, orgId: string, id: string): Promise<void> {
  await db.deleteFrom(table as 'people').where('id', '=', id).where('org_id', IN_ORGANIZATION, orgId).execute();
}

/** One page of the organization's people, teams or vendors, newest first, and the exact total. */
export async function listEntries<T extends DirectoryTable>(db: Executor, table: T, orgId: string, filter: DirectoryFilter, page: Page): Promise<{ rows: Rows[T][]; total: number }> {
  const base = db.selectFrom(table as 'people').where('org_id', '=', orgId);
  let matching = base;
  if (filter.q !== undefined) matching = matching.where(containsText('search_text', filter.q));
  if (filter.active !== undefined) matching = matching.where('active', '=', filter.active ? 1 : 0);
  if (filter.updatedAfter !== undefined) matching = matching.where('updated_at', '>=', filter.updatedAfter);
  if (filter.trade !== undefined) {
    const trade = filter.trade.trim().toLowerCase();
    // A team matches through its members' trades.
    matching =
      table === 'teams'
        ? matching.where('id', 'in', (eb) =>
            eb.selectFrom('team_members').innerJoin('trade_tags', 'trade_tags.owner_id', 'team_members.person_id').select('team_members.team_id').where('trade_tags.org_id', '=', orgId).where('trade_tags.trade', '=', trade),
          )
        : matching.where('id', 'in', (eb) => eb.selectFrom('trade_tags').select('trade_tags.owner_id').where('trade_tags.org_id', '=', orgId).where('trade_tags.trade', '=', trade));
  }
  const [rows, counted] = await Promise.all([
    matching.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute(),
    matching.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows: rows as unknown as Rows[T][], total: Number(counted.n) };
}

/** Replaces the lower-cased trades kept for the `trade` filter. */
export async function replaceTradeTags(db: Executor, orgId: string, ownerId: string, trades: readonly string[]): Promise<void> {
  await db.deleteFrom('trade_tags').where('owner_id', '=', ownerId).execute();
  const tags = [...new Set(trades.map((trade) => trade.trim().toLowerCase()))];
  if (tags.length > 0) await db.insertInto('trade_tags').values(tags.map((trade) => ({ owner_id: ownerId, trade, org_id: orgId }))).execute();
}

/** The members of each team, in the team's order. */
export async function membersOf(db: Executor, teamIds: readonly string[]): Promise<Map<string, string[]>> {
  const members = new Map(teamIds.map((id) => [id, [] as string[]]));
  if (teamIds.length === 0) return members;
  const rows = await db.selectFrom('team_members').select(['team_id', 'person_id']).where('team_id', 'in', teamIds).orderBy('team_id').orderBy('position').execute();
  for (const row of rows) members.get(row.team_id)?.push(row.person_id);
  return members;
}

export async function replaceMembers(db: Executor, orgId: string, teamId: string, memberIds: readonly string[]): Promise<void> {
  await db.deleteFrom('team_members').where('team_id', '=', teamId).execute();
  if (memberIds.length > 0) {
    await db
      .insertInto('team_members')
      .values(memberIds.map((personId, position) => ({ team_id: teamId, person_id: personId, org_id: orgId, position })))
      .execute();
  }
}

/** The teams a person is a member of. */
export async function teamsOfPerson(db: Executor, personId: string): Promise<string[]> {
  const rows = await db.selectFrom('team_members').select('team_id').where('person_id', '=', personId).orderBy('team_id').execute();
  return rows.map((row) => row.team_id);
}

/** Which of `ids` are people of the organization (share-locked on PostgreSQL until the caller's transaction ends). */
export async function existingPeople(db: Executor, orgId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  let query = db.selectFrom('people').select('id').where('org_id', '=', orgId).where('id', 'in', ids);
  if (takesRowLocks(db)) query = query.forShare();
  return new Set((await query.execute()).map((row) => row.id));
}

/**
 * How many open work orders (any status but CLOSED and CANCELLED: a completed one may be reopened)
 * name this person, team or vendor among their assignees.
 */
export async function openWorkOrdersNaming(db: Executor, orgId: string, assigneeId: string): Promise<number> {
  const { n } = await db
    .selectFrom('record_assignees')
    .innerJoin('records', 'records.id', 'record_assignees.record_id')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('record_assignees.org_id', '=', orgId)
    .where('record_assignees.assignee_id', '=', assigneeId)
    .where('records.org_id', '=', orgId)
    .where('records.status', 'not in', ['CLOSED', 'CANCELLED'])
    .executeTakeFirstOrThrow();
  return Number(n);
}
