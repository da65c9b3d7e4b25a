import { sql } from 'kysely';
import type { VersionedMigration } from '../migrate.js';
import { addColumn } from './add-column.js';

/**
 * People, teams and vendors; who work orders are assigned to; access links and the job page's budgets;
 * and each organization's currency.
 *
 * Columns added to existing tables carry a constant default or none, so adding them rewrites no row on
 * either database, and a release without them keeps inserting rows that get the default.
 */
export const people: VersionedMigration = {
  name: '0021-people',
  async up(db, dialect) {
    await addColumn(db, dialect, 'organizations', 'currency', "text NOT NULL DEFAULT 'USD'");
    // The assignees as named when assigned ([{type, id, name}], JSON); '[]' for none.
    await addColumn(db, dialect, 'records', 'assignees', "text NOT NULL DEFAULT '[]'");
    // The name of a system actor when it acts for someone (an access link's vendor or person).
    await addColumn(db, dialect, 'record_events', 'actor_name', 'text');

    for (const table of ['people', 'vendors']) {
      await sql`
        CREATE TABLE IF NOT EXISTS ${sql.raw(table)} (
          id text PRIMARY KEY,
          org_id text NOT NULL REFERENCES organizations (id),
          name text NOT NULL,
          search_text text NOT NULL,
          email text,
          phone text,
          external_ref text,
          trades text NOT NULL,
          ${sql.raw(table === 'people' ? 'hourly_rate_minor bigint, hourly_rate_currency text,' : '')}
          active integer NOT NULL,
          created_at text NOT NULL,
          updated_at text NOT NULL,
          version integer NOT NULL
        )`.execute(db);
      // the list, newest first; and its incremental sync (updatedAfter)
      await sql`CREATE INDEX IF NOT EXISTS ${sql.raw(`${table}_org`)} ON ${sql.raw(table)} (org_id, created_at, id)`.execute(db);
      await sql`CREATE INDEX IF NOT EXISTS ${sql.raw(`${table}_org_updated`)} ON ${sql.raw(table)} (org_id, updated_at)`.execute(db);
    }

    await sql`
      CREATE TABLE IF NOT EXISTS teams (
        id text PRIMARY KEY,
        org_id text NOT NULL REFERENCES organizations (id),
        name text NOT NULL,
        search_text text NOT NULL,
        active integer NOT NULL,
        created_at text NOT NULL,
        updated_at text NOT NULL,
        version integer NOT NULL
      )`.execute(db);
    await sql`CREATE INDEX IF NOT EXISTS teams_org ON teams (org_id, created_at, id)`.execute(db);
    await sql`CREATE INDEX IF NOT EXISTS teams_org_updated ON teams (org_id, updated_at)`.execute(db);

    await sql`
      CREATE TABLE IF NOT EXISTS team_members (
        team_id text NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
        person_id text NOT NULL REFERENCES people (id),
        org_id text NOT NULL,
        position integer NOT NULL,
        PRIMARY KEY (team_id, person_id)
      )`.execute(db);
    // the teams of a person: assigneeId through teams, and a person's delete
    await sql`CREATE INDEX IF NOT EXISTS team_members_person ON team_members (person_id, team_id)`.execute(db);

    // Each trade of a person or vendor, lower-cased, for the lists' `trade` filter.
    await sql`
      CREATE TABLE IF NOT EXISTS trade_tags (
        owner_id text NOT NULL,
        trade text NOT NULL,
        org_id text NOT NULL,
        PRIMARY KEY (owner_id, trade)
      )`.execute(db);
    // `trade=` on the people, teams and vendors lists
    await sql`CREATE INDEX IF NOT EXISTS trade_tags_trade ON trade_tags (org_id, trade, owner_id)`.execute(db);

    // Who each work order is assigned to, one row per assignee, kept with the record's `assignees`;
    // `created_at` is the work order's (it never changes), the list's sort key.
    await sql`
      CREATE TABLE IF NOT EXISTS record_assignees (
        record_id text NOT NULL,
        assignee_id text NOT NULL,
        assignee_type text NOT NULL,
        org_id text NOT NULL,
        created_at text NOT NULL,
        PRIMARY KEY (record_id, assignee_id)
      )`.execute(db);
    // GET /records?assigneeId=: the page of ids and the total from the index alone; and the in_use check of a delete.
    // The assignee leads (ids are unique across organizations): a person's own rows and their teams' are
    // two lookups of it (SQLite's OR optimization needs the OR'ed column first).
    await sql`CREATE INDEX IF NOT EXISTS record_assignees_assignee ON record_assignees (assignee_id, org_id, created_at, record_id)`.execute(db);

    await sql`
      CREATE TABLE IF NOT EXISTS access_links (
        id text PRIMARY KEY,
        org_id text NOT NULL REFERENCES organizations (id),
        record_id text NOT NULL,
        token_hash text NOT NULL,
        holder_type text NOT NULL,
        holder_id text NOT NULL,
        holder_name text NOT NULL,
        expires_at text NOT NULL,
        revoked_at text,
        last_used_at text,
        created_by text NOT NULL,
        created_at text NOT NULL
      )`.execute(db);
    // the page's lookup by the presented token's SHA-256
    await sql`CREATE UNIQUE INDEX IF NOT EXISTS access_links_token ON access_links (token_hash)`.execute(db);
    // a work order's links (GET /records/{id}/access-links)
    await sql`CREATE INDEX IF NOT EXISTS access_links_record ON access_links (record_id, created_at)`.execute(db);

    // The job page's request budgets: one fixed-window counter per link and per client address.
    await sql`
      CREATE TABLE IF NOT EXISTS job_page_budgets (
        key text PRIMARY KEY,
        window_started_at text NOT NULL,
        used integer NOT NULL
      )`.execute(db);
  },
};
