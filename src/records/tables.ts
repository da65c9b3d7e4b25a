import type { Generated } from 'kysely';
/** Row types of this feature's tables (timestamps ISO 8601 UTC text, JSON columns serialized text; see src/db/tables.ts). */
export interface RecordsTable {
  id: string;
  org_id: string;
  category_id: string;
  status: string;
  address: string;
  requester_name: string;
  description: string;
  priority: string;
  due_at: string | null;
  assignee: string | null;
  asset_id: string | null;
  location_id: string | null;
  external_ref: string | null;
  metadata: string;
  resolution_notes: string | null;
  completed_at: string | null;
  closed_at: string | null;
  cancelled_at: string | null;
  created_at: string;
  updated_at: string;
  version: number;
  /** What generated the work order (JSON of RecordSource), or null: a client created it. */
  source: string | null;
  /** The `due_at` for which record.overdue was emitted; another value (or none) may be announced again. */
  overdue_for: string | null;
  /** Who it is assigned to (JSON of Assignee[], with the names as they were when assigned); '[]' for none. */
  assignees: string;
  /** What it cost so far (JSON of WorkOrderCosts: Money totals of its cost lines); null before its first line (migration 0024). */
  costs: string | null;
  /** Minutes of labor logged on it, the sum of its labor lines. */
  labor_minutes: number;
  /** Custom-field values (JSON `{key: value}`), checked against the organization's fields; '{}' for none (migration 0028). */
  custom_fields: string;
  /** The checklists it was given, each at the version it got (JSON of RecordChecklist[]); '[]' for none. */
  checklists: string;
  /** The work request whose approval created it (`wrq_…`, migration 0027); null otherwise. */
  request_id: string | null;
}

export interface RecordEventsTable {
  id: string;
  org_id: string;
  record_id: string;
  /** What happened: created, updated, or the lifecycle action (assign, start, …). */
  action: string;
  from_status: string | null;
  to_status: string | null;
  actor_key_id: string | null;
  /** Whom a system actor acted for (an access link's vendor or person), as named then; null otherwise. */
  actor_name: string | null;
  /** JSON: action data (assignee, notes, reason, changed fields). */
  data: string;
  created_at: string;
}

/** Exact per-organization, per-status work-order counts, kept in the same transaction as each change. */
export interface RecordCountersTable {
  org_id: string;
  status: string;
  count: number;
  /** Work orders that entered or left this status other than by being created (migration 0009). */
  moves: Generated<number>;
}

/** PostgreSQL only: changes to record_counters not yet folded into it (migration 0012). */
export interface RecordCountDeltasTable {
  org_id: string;
  status: string;
  count_delta: number;
  moves_delta: number;
}

/** One row per assignee a work order's `assignees` names (migration 0021), for GET /records?assigneeId= and deletes of people, teams and vendors. */
export interface RecordAssigneesTable {
  record_id: string;
  assignee_id: string;
  assignee_type: string;
  org_id: string;
  /** The work order's createdAt: the list's sort key, read from the index. */
  created_at: string;
}

/** An id a list by `assigneeId` finds a work order under: an assignee, or a member of a team it names (src/records/assignee-matches.ts). */
export interface RecordAssigneeMatchesTable {
  record_id: string;
  match_id: string;
  org_id: string;
  /** The work order's createdAt, as in record_assignees. */
  created_at: string;
}

declare module '../db/tables.js' {
  interface Tables {
    records: RecordsTable;
    record_assignees: RecordAssigneesTable;
    record_assignee_matches: RecordAssigneeMatchesTable;
    record_events: RecordEventsTable;
    record_counters: RecordCountersTable;
    record_count_deltas: RecordCountDeltasTable;
  }
}
