import type { Db, Executor, Tx } from '../db/database.js';
import type { InTransaction } from '../idempotency/in-transaction.js';
import type { Page } from '../db/page.js';
import { writeOptimistically } from '../db/optimistic-write.js';
import { isForeignKeyViolation } from '../db/errors.js';
import { assertVersion, updateIfVersion } from '../db/versioned-rows.js';
import { searchKey } from '../db/text-search.js';
import { emitEvent } from '../events/outbox.js';
import { rematchTeams } from '../records/assignee-matches.js';
import type { EventType } from '../events/catalogue.js';
import { errors } from '../errors.js';
import { newId } from '../ids.js';
import { isoNow, withCanonicalUpdatedAfter, type Clock } from '../clock.js';
import type { OrganizationService } from '../orgs/organizations.js';
import { parseMoney, type Money } from '../money/money.js';
import type { PeopleTable, TeamsTable, VendorsTable } from './tables.js';
import { PERSON, VENDOR, type ContactEntries, type ContactKind, type ContactRows, type ContactTable } from './contact-kinds.js';
import {
  deleteEntry,
  existingPeople,
  findEntry,
  insertEntry,
  listEntries,
  membersOf,
  openWorkOrdersNaming,
  replaceMembers,
  replaceTradeTags,
  teamsOfPerson,
  toPerson,
  toTeam,
  toVendor,
  type DirectoryTable,
} from './repository.js';
import type {
  CreatePersonInput,
  CreateTeamInput,
  CreateVendorInput,
  DirectoryFilter,
  Person,
  Team,
  UpdatePersonInput,
  UpdateTeamInput,
  UpdateVendorInput,
  Vendor,
} from './schemas.js';

type Changes = Record<string, { from: unknown; to: unknown }>;

/** Each field of `after` that differs from `before`, with both values (the `*.updated` events' `changes`). */
function changesBetween<T extends object>(before: T, after: T, fields: readonly string[]): Changes {
  const changes: Changes = {};
  const was = before as Record<string, unknown>;
  const is = after as Record<string, unknown>;
  for (const field of fields) if (JSON.stringify(was[field]) !== JSON.stringify(is[field])) changes[field] = { from: was[field], to: is[field] };
  return changes;
}

const TEAM_FIELDS = ['name', 'memberIds', 'active'] as const;

function searchText(...parts: (string | null | undefined)[]): string {
  return searchKey(parts.filter(Boolean).join(' '));
}

/** Trades as kept: trimmed, each once (case-insensitively), in the order given. */
function cleanTrades(trades: readonly string[] | undefined): string[] {
  const seen = new Set<string>();
  return (trades ?? []).map((trade) => trade.trim()).filter((trade) => !seen.has(trade.toLowerCase()) && seen.add(trade.toLowerCase()));
}

/**
 * The directory of who does the work: people (technicians), teams of people, and vendors
 * (contractors). Work orders name them among their `assignees` (src/people/assignees.ts); a delete
 * of one that open work orders name is 409 in_use, also against an assignment running at the same
 * time on another process: the delete locks the row before it looks, the assignment share-locks it.
 */
export class DirectoryService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly organizations: OrganizationService,
  ) {}

  // --- people and vendors ---------------------------------------------------------------------

  async createPerson(orgId: string, input: CreatePersonInput, within?: InTransaction<Person>): Promise<Person> {
    return this.createContact(PERSON, orgId, input, (tx) => this.rateColumns(tx, orgId, input.hourlyRate ?? null), within);
  }

  async createVendor(orgId: string, input: CreateVendorInput, within?: InTransaction<Vendor>): Promise<Vendor> {
    return this.createContact(VENDOR, orgId, input, async () => ({}), within);
  }

  async getPerson(orgId: string, id: string): Promise<Person> {
    return toPerson(await this.findContact(PERSON, orgId, id));
  }

  async getVendor(orgId: string, id: string): Promise<Vendor> {
    return toVendor(await this.findContact(VENDOR, orgId, id));
  }

  async listPeople(orgId: string, filter: DirectoryFilter, page: Page): Promise<{ people: Person[]; total: number }> {
    const { rows, total } = await listEntries(this.db, 'people', orgId, withCanonicalUpdatedAfter(filter), page);
    return { people: rows.map(toPerson), total };
  }

  async listVendors(orgId: string, filter: DirectoryFilter, page: Page): Promise<{ vendors: Vendor[]; total: number }> {
    const { rows, total } = await listEntries(this.db, 'vendors', orgId, withCanonicalUpdatedAfter(filter), page);
    return { vendors: rows.map(toVendor), total };
  }

  async updatePerson(orgId: string, id: string, input: UpdatePersonInput, acceptedVersions?: number[]): Promise<Person> {
    return this.updateContact(PERSON, orgId, id, input, acceptedVersions, async (tx) => (input.hourlyRate === undefined ? {} : this.rateColumns(tx, orgId, input.hourlyRate)));
  }

  async updateVendor(orgId: string, id: string, input: UpdateVendorInput, acceptedVersions?: number[]): Promise<Vendor> {
    return this.updateContact(VENDOR, orgId, id, input, acceptedVersions, async () => ({}));
  }

  /** Deletes a person; 409 in_use while open work orders name them. They leave every team they were in (each emits team.updated). */
  async deletePerson(orgId: string, id: string, acceptedVersions?: number[]): Promise<void> {
    await this.deleteContact(PERSON, orgId, id, acceptedVersions, async (tx, now) => {
      const teamIds = await teamsOfPerson(tx, id);
      for (const teamId of teamIds) await this.removeMember(tx, orgId, teamId, id, now);
      // Once every team is locked (in id order), so an assignment share-locking one of them cannot deadlock with this.
      await rematchTeams(tx, orgId, teamIds);
    });
  }

  /** Deletes a vendor; 409 in_use while open work orders name it. Its access links stop working (the page finds no vendor). */
  async deleteVendor(orgId: string, id: string, acceptedVersions?: number[]): Promise<void> {
    await this.deleteContact(VENDOR, orgId, id, acceptedVersions, async () => {});
  }

  private async createContact<T extends ContactTable>(kind: ContactKind<T>, orgId: string, input: CreatePersonInput | CreateVendorInput, extra: (tx: Tx) => Promise<Partial<ContactRows[T]>>, within?: InTransaction<ContactEntries[T]>): Promise<ContactEntries[T]> {
    return this.db.transaction().execute(async (tx) => {
      const now = isoNow(this.clock);
      const trades = cleanTrades(input.trades);
      const row = {
        id: newId(kind.idKind),
        org_id: orgId,
        name: input.name.trim(),
        search_text: searchText(input.name, input.email, input.phone, input.externalRef),
        email: input.email ?? null,
        phone: input.phone ?? null,
        external_ref: input.externalRef ?? null,
        trades: JSON.stringify(trades),
        ...(await extra(tx)),
        active: input.active === false ? 0 : 1,
        created_at: now,
        updated_at: now,
        version: 1,
      } as ContactRows[T];
      await insertEntry(tx, kind.table, row as never);
      await replaceTradeTags(tx, orgId, row.id, trades);
      const entry = kind.present(row);
      await this.emit(tx, orgId, kind.events.created, { [kind.idKey]: row.id, [kind.payloadKey]: entry }, now);
      await within?.(tx, entry);
      return entry;
    });
  }

  private async findContact<T extends ContactTable>(kind: ContactKind<T>, orgId: string, id: string): Promise<ContactRows[T]> {
    const row = await findEntry(this.db, kind.table, orgId, id);
    if (!row) throw errors.notFound(`${kind.noun} "${id}"`);
    return row as ContactRows[T];
  }

  private async updateContact<T extends ContactTable>(kind: ContactKind<T>, orgId: string, id: string, input: UpdatePersonInput | UpdateVendorInput, acceptedVersions: number[] | undefined, extra: (tx: Tx) => Promise<Partial<ContactRows[T]>>): Promise<ContactEntries[T]> {
    return writeOptimistically(this.db, {
      noun: kind.noun,
      id,
      acceptedVersions,
      read: async (tx) => (await findEntry(tx, kind.table, orgId, id)) as ContactRows[T] | undefined,
      decide: async (tx, current) => {
        const next: ContactRows[T] = { ...current, ...this.contactChanges(current, input), ...(await extra(tx)) };
        const changes = changesBetween(kind.present(current), kind.present(next), kind.fields);
        if (Object.keys(changes).length === 0) return { next: current };
        const now = this.stamp(current, next);
        return {
          next,
          afterWrite: async () => {
            if (changes.trades) await replaceTradeTags(tx, orgId, id, JSON.parse(next.trades) as string[]);
            await this.emit(tx, orgId, kind.events.updated, { [kind.idKey]: id, changes, [kind.payloadKey]: kind.present(next) }, now);
          },
        };
      },
      write: (tx, current, next) => writeRow(tx, kind.table, current, next),
      present: kind.present,
    });
  }

  private async deleteContact<T extends ContactTable>(kind: ContactKind<T>, orgId: string, id: string, acceptedVersions: number[] | undefined, before: (tx: Tx, now: string) => Promise<void>): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      const current = (await this.lockForDelete(tx, kind.table, orgId, id, kind.noun, acceptedVersions)) as ContactRows[T];
      const now = isoNow(this.clock);
      await before(tx, now);
      await replaceTradeTags(tx, orgId, id, []);
      await deleteEntry(tx, kind.table, orgId, id);
      await this.emit(tx, orgId, kind.events.deleted, { [kind.idKey]: id, [kind.payloadKey]: kind.present(current) }, now);
    });
  }

  // --- teams -----------------------------------------------------------------------------------

  async createTeam(orgId: string, input: CreateTeamInput, within?: InTransaction<Team>): Promise<Team> {
    return this.db
      .transaction()
      .execute(async (tx) => {
        const now = isoNow(this.clock);
        const memberIds = input.memberIds ?? [];
        await assertPeopleExist(tx, orgId, memberIds);
        const row: TeamsTable = { id: newId('team'), org_id: orgId, name: input.name.trim(), search_text: searchText(input.name), active: input.active === false ? 0 : 1, created_at: now, updated_at: now, version: 1 };
        await insertEntry(tx, 'teams', row);
        await replaceMembers(tx, orgId, row.id, memberIds);
        const team = toTeam(row, memberIds);
        await this.emit(tx, orgId, 'team.created', { teamId: row.id, team }, now);
        await within?.(tx, team);
        return team;
      })
      .catch(translateMemberError);
  }

  async getTeam(orgId: string, id: string): Promise<Team> {
    const row = await findEntry(this.db, 'teams', orgId, id);
    if (!row) throw errors.notFound(`Team "${id}"`);
    return toTeam(row, (await membersOf(this.db, [id])).get(id) ?? []);
  }

  async listTeams(orgId: string, filter: DirectoryFilter, page: Page): Promise<{ teams: Team[]; total: number }> {
    const { rows, total } = await listEntries(this.db, 'teams', orgId, withCanonicalUpdatedAfter(filter), page);
    const members = await membersOf(this.db, rows.map((row) => row.id));
    return { teams: rows.map((row) => toTeam(row, members.get(row.id) ?? [])), total };
  }

  async updateTeam(orgId: string, id: string, input: UpdateTeamInput, acceptedVersions?: number[]): Promise<Team> {
    let members: string[] = [];
    return writeOptimistically(this.db, {
      noun: 'Team',
      id,
      acceptedVersions,
      read: async (tx) => {
        const row = await findEntry(tx, 'teams', orgId, id);
        members = row ? ((await membersOf(tx, [id])).get(id) ?? []) : [];
        return row;
      },
      decide: async (tx, current) => {
        const next: TeamsTable = { ...current };
        if (input.name !== undefined) next.name = input.name.trim();
        next.search_text = searchText(next.name);
        if (input.active !== undefined) next.active = input.active ? 1 : 0;
        const nextMembers = input.memberIds ?? members;
        if (input.memberIds) await assertPeopleExist(tx, orgId, input.memberIds);
        const changes = changesBetween(toTeam(current, members), toTeam(next, nextMembers), TEAM_FIELDS);
        if (Object.keys(changes).length === 0) return { next: current };
        const now = this.stamp(current, next);
        members = nextMembers;
        return {
          next,
          afterWrite: async () => {
            if (changes.memberIds) {
              await replaceMembers(tx, orgId, id, nextMembers);
              await rematchTeams(tx, orgId, [id]);
            }
            await this.emit(tx, orgId, 'team.updated', { teamId: id, changes, team: toTeam(next, nextMembers) }, now);
          },
        };
      },
      write: (tx, current, next) => writeRow(tx, 'teams', current, next),
      present: (row) => toTeam(row, members),
    }).catch(translateMemberError);
  }

  /** Deletes a team (its members stay people of the organization); 409 in_use while open work orders name it. */
  async deleteTeam(orgId: string, id: string, acceptedVersions?: number[]): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      const current = (await this.lockForDelete(tx, 'teams', orgId, id, 'Team', acceptedVersions)) as TeamsTable;
      const memberIds = (await membersOf(tx, [id])).get(id) ?? [];
      await replaceMembers(tx, orgId, id, []);
      // Closed work orders may still name it: their members' rows go with the members.
      await rematchTeams(tx, orgId, [id]);
      await deleteEntry(tx, 'teams', orgId, id);
      await this.emit(tx, orgId, 'team.deleted', { teamId: id, team: toTeam(current, memberIds) }, isoNow(this.clock));
    });
  }

  // --- shared ----------------------------------------------------------------------------------

  /**
   * The row, locked for the delete (PostgreSQL: an assignment holding it share-locked commits first),
   * then the check that no open work order names it: an assignment waiting on the lock finds it gone.
   */
  private async lockForDelete(tx: Tx, table: DirectoryTable, orgId: string, id: string, noun: string, acceptedVersions: number[] | undefined) {
    const current = await findEntry(tx, table, orgId, id, 'update');
    if (!current) throw errors.notFound(`${noun} "${id}"`);
    assertVersion(acceptedVersions, current.version, `The ${noun.toLowerCase()}`);
    const open = await openWorkOrdersNaming(tx, orgId, id);
    if (open > 0) {
      throw errors.namedByOpenWorkOrders(
        `${noun} "${id}" is an assignee of ${open} open work order${open === 1 ? '' : 's'}: reassign or finish ${open === 1 ? 'it' : 'them'} first, or deactivate it (PATCH with "active": false) to keep it off new ones.`,
      );
    }
    return current;
  }

  /** Takes a deleted person out of a team, as a new version of the team with its event. */
  private async removeMember(tx: Tx, orgId: string, teamId: string, personId: string, now: string): Promise<void> {
    const team = await findEntry(tx, 'teams', orgId, teamId, 'update');
    if (!team) return;
    const before = (await membersOf(tx, [teamId])).get(teamId) ?? [];
    const after = before.filter((member) => member !== personId);
    const next = { ...team, updated_at: now, version: team.version + 1 };
    await updateIfVersion(tx, 'teams', orgId, teamId, team.version, { updated_at: now, version: next.version });
    await replaceMembers(tx, orgId, teamId, after);
    await this.emit(tx, orgId, 'team.updated', { teamId, changes: { memberIds: { from: before, to: after } }, team: toTeam(next, after) }, now);
  }

  /** The contact columns a PATCH of a person or vendor sets (name, email, phone, externalRef, trades, active). */
  private contactChanges<R extends PeopleTable | VendorsTable>(current: R, input: UpdatePersonInput | UpdateVendorInput): Partial<R> {
    const next: Partial<PeopleTable> = {};
    if (input.name !== undefined) next.name = input.name.trim();
    if (input.email !== undefined) next.email = input.email;
    if (input.phone !== undefined) next.phone = input.phone;
    if (input.externalRef !== undefined) next.external_ref = input.externalRef;
    if (input.trades !== undefined) next.trades = JSON.stringify(cleanTrades(input.trades));
    if (input.active !== undefined) next.active = input.active ? 1 : 0;
    const merged = { ...current, ...next };
    next.search_text = searchText(merged.name, merged.email, merged.phone, merged.external_ref);
    return next as Partial<R>;
  }

  private stamp(current: { version: number }, next: { updated_at: string; version: number }): string {
    const now = isoNow(this.clock);
    next.updated_at = now;
    next.version = current.version + 1;
    return now;
  }

  /** A person's hourly rate as its columns, checked against the organization's currency. */
  private async rateColumns(tx: Executor, orgId: string, rate: Money | null): Promise<Partial<PeopleTable>> {
    const parsed = rate === null ? null : parseMoney(rate, { field: 'body.hourlyRate', currency: await this.organizations.currencyOf(orgId, tx) });
    return { hourly_rate_minor: parsed === null ? null : parsed.minor.toString(), hourly_rate_currency: parsed?.currency ?? null };
  }

  private async emit(tx: Executor, orgId: string, type: EventType, payload: Record<string, unknown>, now: string): Promise<void> {
    await emitEvent(tx, { orgId, type, payload, occurredAt: now });
  }
}

async function writeRow<T extends DirectoryTable>(tx: Tx, table: T, current: { id: string; org_id: string; version: number }, next: object): Promise<boolean> {
  const { id: _id, org_id: _org, ...columns } = next as Record<string, unknown>;
  return updateIfVersion(tx, table, current.org_id, current.id, current.version, columns as never);
}

async function assertPeopleExist(tx: Executor, orgId: string, memberIds: readonly string[]): Promise<void> {
  const found = await existingPeople(tx, orgId, memberIds);
  const missing = memberIds.map((id, index) => ({ id, index })).filter(({ id }) => !found.has(id));
  if (missing.length > 0) {
    throw errors.unprocessable(
      'The team names people who do not exist in your organization.',
      missing.map(({ id, index }) => ({ field: `body.memberIds.${index}`, message: `no person "${id}" exists in your organization` })),
    );
  }
}

/** A member deleted between the check and the write: the foreign key refused it. */
function translateMemberError(error: unknown): never {
  if (isForeignKeyViolation(error)) throw errors.unprocessable('A member of the team was deleted meanwhile; check `memberIds` and retry.');
  throw error;
}
