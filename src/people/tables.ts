/** Row types of this feature's tables (migration 0021; timestamps ISO 8601 UTC text, JSON columns serialized text). */

/** A person (technician) or a vendor (contractor) of an organization: the directory's contacts. */
interface ContactColumns {
  id: string;
  org_id: string;
  name: string;
  /** Name, email, phone and externalRef lower-cased (searchKey), for the lists' `q`. */
  search_text: string;
  email: string | null;
  phone: string | null;
  external_ref: string | null;
  /** JSON array of the trades as written; trade_tags holds them lower-cased for the `trade` filter. */
  trades: string;
  /** 1 while it can be assigned; 0 once deactivated (it stays on the work orders that name it). */
  active: number;
  created_at: string;
  updated_at: string;
  version: number;
}

export interface PeopleTable extends ContactColumns {
  /** The hourly rate in the currency's minor units (src/money), or null; a bigint on PostgreSQL. */
  hourly_rate_minor: number | string | null;
  hourly_rate_currency: string | null;
}

export type VendorsTable = ContactColumns;

export interface TeamsTable {
  id: string;
  org_id: string;
  name: string;
  search_text: string;
  active: number;
  created_at: string;
  updated_at: string;
  version: number;
}

/** A team's members, in the order the team lists them (`position`). */
export interface TeamMembersTable {
  team_id: string;
  person_id: string;
  org_id: string;
  position: number;
}

/** One trade of a person or vendor, lower-cased. */
export interface TradeTagsTable {
  owner_id: string;
  trade: string;
  org_id: string;
}

/** A link that lets a vendor or person without an API key work on one work order (GET /job/{token}). */
export interface AccessLinksTable {
  id: string;
  org_id: string;
  record_id: string;
  /** SHA-256 (hex) of the token; the token itself is shown once, at creation. */
  token_hash: string;
  holder_type: string;
  holder_id: string;
  /** The holder's name when the link was made. */
  holder_name: string;
  expires_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
  /** The API key that made it. */
  created_by: string;
  created_at: string;
}

/** A fixed-window request counter of the job page, per link (`link:<id>`) and per client address (`address:<ip>`). */
export interface JobPageBudgetsTable {
  key: string;
  window_started_at: string;
  used: number;
}

declare module '../db/tables.js' {
  interface Tables {
    people: PeopleTable;
    vendors: VendorsTable;
    teams: TeamsTable;
    team_members: TeamMembersTable;
    trade_tags: TradeTagsTable;
    access_links: AccessLinksTable;
    job_page_budgets: JobPageBudgetsTable;
  }
}
