import SqliteDatabase from 'better-sqlite3';
import type { RecordStatus } from '../../src/records/schemas.js';

/**
 * Status mix of seeded work orders, one slot per 20 rows: mostly open work, some finished.
 * The filtered list is measured on OPEN, the largest slice (40 %).
 */
const STATUS_CYCLE: RecordStatus[] = [
  ...Array<RecordStatus>(8).fill('OPEN'),
  ...Array<RecordStatus>(4).fill('ASSIGNED'),
  ...Array<RecordStatus>(3).fill('IN_PROGRESS'),
  'ON_HOLD',
  'COMPLETED',
  'COMPLETED',
  'CLOSED',
  'CANCELLED',
];

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

function base32(value: number, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) {
    out = CROCKFORD[value % 32]! + out;
    value = Math.floor(value / 32);
  }
  return out;
}

/** The part of an id after its prefix, shaped like a ULID of `timeMs`, unique through `serial` (no randomness needed here). */
export function seededUlid(timeMs: number, serial: number): string {
  return `${base32(timeMs, 10)}${base32(serial, 16)}`;
}

/** A `rec_` id shaped like a ULID of `timeMs`, unique through `serial`. */
function seededRecordId(timeMs: number, serial: number): string {
  return `rec_${seededUlid(timeMs, serial)}`;
}

/**
 * The directory the seeded work orders are assigned to: 1,000 people in 100 teams of 10. An assigned
 * work order names one person (each takes 20 consecutive serials, every status of the cycle, in turn),
 * and every tenth also that person's team, so a person's list (`GET /records?assigneeId=`) holds their
 * own work and some of their team's: about 100 work orders each at 100k.
 */
export const BENCH_PEOPLE = 1_000;
export const BENCH_TEAM_SIZE = 10;

export function benchPersonId(index: number): string {
  return `per_01BENCHPERSON${String(index).padStart(14, '0')}`;
}

export function benchTeamId(index: number): string {
  return `tem_01BENCHTEAM${String(index).padStart(16, '0')}`;
}

/** The assignees of the `serial`-th seeded work order (none unless it is assigned). */
function seededAssignees(serial: number, assigned: boolean): { type: 'person' | 'team'; id: string; name: string }[] {
  if (!assigned) return [];
  const person = Math.floor(serial / STATUS_CYCLE.length) % BENCH_PEOPLE;
  const team = Math.floor(person / BENCH_TEAM_SIZE);
  const named = [{ type: 'person' as const, id: benchPersonId(person), name: `Technician ${person}` }];
  return serial % 10 === 0 ? [...named, { type: 'team' as const, id: benchTeamId(team), name: `Team ${team}` }] : named;
}

/** The columns of one seeded work order that vary from row to row (the rest are NULL, '{}' or 1). */
export interface SeededRecord {
  id: string;
  status: RecordStatus;
  address: string;
  requesterName: string;
  description: string;
  priority: string;
  assignee: string | null;
  /** JSON of its assignees, as the service stores them. */
  assignees: string;
  assigneeRows: { id: string; type: string }[];
  externalRef: string | null;
  resolutionNotes: string | null;
  completedAt: string | null;
  closedAt: string | null;
  cancelledAt: string | null;
  /** Also its updated_at. */
  createdAt: string;
}

const PRIORITIES = ['LOW', 'MEDIUM', 'MEDIUM', 'HIGH', 'URGENT'];

/** The `serial`-th work order of an organization (0 is the newest), created `serial` ms before `newestMs`. */
export function seededRecord(serial: number, newestMs: number): SeededRecord {
  const status = STATUS_CYCLE[serial % STATUS_CYCLE.length]!;
  const createdMs = newestMs - serial;
  const createdAt = new Date(createdMs).toISOString();
  const finished = status === 'COMPLETED' || status === 'CLOSED';
  const assigned = status !== 'OPEN' && status !== 'CANCELLED';
  const assignees = seededAssignees(serial, assigned);
  return {
    id: seededRecordId(createdMs, serial),
    status,
    address: `${(serial % 400) + 1} Benchmark Street, Unit ${serial % 97}`,
    requesterName: `Requester ${serial % 1000}`,
    description: `Seeded work order ${serial}: the boiler in the basement makes a knocking noise after midnight.`,
    priority: PRIORITIES[serial % PRIORITIES.length]!,
    assignee: assigned ? `Technician ${serial % 50}` : null,
    assignees: JSON.stringify(assignees),
    assigneeRows: assignees.map(({ id, type }) => ({ id, type })),
    externalRef: serial % 3 === 0 ? `ERP-${serial}` : null,
    resolutionNotes: finished ? 'Replaced the pressure valve.' : null,
    completedAt: finished ? createdAt : null,
    closedAt: status === 'CLOSED' ? createdAt : null,
    cancelledAt: status === 'CANCELLED' ? createdAt : null,
    createdAt,
  };
}

/** The default newest creation time of seeded work orders: one day ago. */
export function defaultNewestMs(newestAt?: Date): number {
  return (newestAt ?? new Date(Date.now() - 86_400_000)).getTime();
}

/** A seeded work order's custom-field values by key (text, select, date and boolean as the API stores them). */
export type SeededCustomFields = (serial: number) => Record<string, string | number | boolean>;

/** A work order's `custom_fields` JSON, keys sorted as the service writes them, and its typed rows for the `cf.` filters. */
export function seededCustomFieldRows(values: Record<string, string | number | boolean>): { json: string; rows: { key: string; text: string | null; number: number | null }[] } {
  const sorted = Object.entries(values).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    json: JSON.stringify(Object.fromEntries(sorted)),
    rows: sorted.map(([key, value]) => (typeof value === 'number' ? { key, text: null, number: value } : { key, text: String(value), number: null })),
  };
}

export interface SeedOptions {
  orgId: string;
  categoryId: string;
  /** Custom-field values of each seeded work order (none unless given); the fields must exist in the organization. */
  customFields?: SeededCustomFields;
  /** How many work orders to add to the organization. */
  count: number;
  /** Newest seeded creation time; rows are 1 ms apart going back from it (default: one day ago). */
  newestAt?: Date;
}

export interface SeedResult {
  inserted: number;
  totalInOrg: number;
  byStatus: Partial<Record<RecordStatus, number>>;
  seconds: number;
}

/**
 * Writes work orders straight into the SQLite file, fast: one prepared statement, large
 * transactions, and record_counters moved by exactly what was inserted, so `total` stays exact.
 * Called again on the same organization it appends older rows after the existing ones, which is
 * how the list part grows one organization from 10k to 100k to 1M work orders.
 *
 * The service must not be running on this file (it would be only a slower but correct writer).
 */
export function seedRecords(sqlitePath: string, options: SeedOptions): SeedResult {
  const started = performance.now();
  const db = new SqliteDatabase(sqlitePath);
  try {
    db.pragma('journal_mode = WAL');
    // The rows are throw-away benchmark data: an OS crash during seeding loses nothing of value.
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -262144');

    const existing = (db.prepare('SELECT COUNT(*) AS n FROM records WHERE org_id = ?').get(options.orgId) as { n: number }).n;
    const newest = defaultNewestMs(options.newestAt);
    const insert = db.prepare(
      `INSERT INTO records (id, org_id, category_id, status, address, requester_name, description, priority, due_at, assignee, assignees,
         asset_id, location_id, external_ref, metadata, resolution_notes, completed_at, closed_at, cancelled_at, created_at, updated_at, version, custom_fields)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, NULL, NULL, ?, '{}', ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    // Migration 0030's triggers count each value into custom_field_value_counts, which a `cf.<key>=value` list's total reads.
    const insertValue = db.prepare(
      `INSERT INTO custom_field_values (entity_id, field_key, org_id, entity, text_value, number_value, created_at) VALUES (?, ?, ?, 'record', ?, ?, ?)`,
    );
    const insertAssignee = db.prepare('INSERT INTO record_assignees (record_id, assignee_id, assignee_type, org_id, created_at) VALUES (?, ?, ?, ?, ?)');
    const bumpCounter = db.prepare(
      `INSERT INTO record_counters (org_id, status, count) VALUES (?, ?, ?)
       ON CONFLICT (org_id, status) DO UPDATE SET count = record_counters.count + excluded.count`,
    );
    const byStatus: Partial<Record<RecordStatus, number>> = {};

    const insertBatch = db.transaction((from: number, to: number) => {
      const counts = new Map<RecordStatus, number>();
      for (let i = from; i < to; i++) {
        const row = seededRecord(existing + i, newest);
        const fields = options.customFields ? seededCustomFieldRows(options.customFields(existing + i)) : { json: '{}', rows: [] };
        insert.run(
          row.id,
          options.orgId,
          options.categoryId,
          row.status,
          row.address,
          row.requesterName,
          row.description,
          row.priority,
          row.assignee,
          row.assignees,
          row.externalRef,
          row.resolutionNotes,
          row.completedAt,
          row.closedAt,
          row.cancelledAt,
          row.createdAt,
          row.createdAt,
          1,
          fields.json,
        );
        for (const value of fields.rows) insertValue.run(row.id, value.key, options.orgId, value.text, value.number, row.createdAt);
        for (const assignee of row.assigneeRows) insertAssignee.run(row.id, assignee.id, assignee.type, options.orgId, row.createdAt);
        counts.set(row.status, (counts.get(row.status) ?? 0) + 1);
      }
      for (const [status, n] of counts) {
        bumpCounter.run(options.orgId, status, n);
        byStatus[status] = (byStatus[status] ?? 0) + n;
      }
    });

    const batch = 50_000;
    for (let from = 0; from < options.count; from += batch) insertBatch(from, Math.min(options.count, from + batch));
    db.prepare(assigneeMatchesSql('@org')).run({ org: options.orgId });
    db.pragma('wal_checkpoint(TRUNCATE)');

    return { inserted: options.count, totalInOrg: existing + options.count, byStatus, seconds: (performance.now() - started) / 1000 };
  } finally {
    db.close();
  }
}

/**
 * The seeded work orders' rows in record_assignee_matches (as the API keeps them: each assignee, and each
 * member of a team named), for the whole organization, `orgParameter` its placeholder; again adds nothing.
 */
export function assigneeMatchesSql(orgParameter: string): string {
  return `INSERT INTO record_assignee_matches (record_id, match_id, org_id, created_at)
    SELECT * FROM (
      SELECT record_id, assignee_id, org_id, created_at FROM record_assignees WHERE org_id = ${orgParameter}
      UNION
      SELECT ra.record_id, tm.person_id, ra.org_id, ra.created_at FROM record_assignees ra JOIN team_members tm ON tm.team_id = ra.assignee_id WHERE ra.org_id = ${orgParameter}
    ) AS matches
    WHERE true
    ON CONFLICT DO NOTHING`;
}

/** How many of an organization's first `count` seeded work orders name `person` directly or through their team. */
export function seededForPerson(count: number, person: number): number {
  const team = benchTeamId(Math.floor(person / BENCH_TEAM_SIZE));
  let n = 0;
  for (let serial = 0; serial < count; serial++) {
    const status = STATUS_CYCLE[serial % STATUS_CYCLE.length]!;
    const named = seededAssignees(serial, status !== 'OPEN' && status !== 'CANCELLED');
    if (named.some((assignee) => assignee.id === benchPersonId(person) || assignee.id === team)) n++;
  }
  return n;
}

/** The people and teams the seeded work orders name (BENCH_PEOPLE), added directly; again changes nothing. */
export function seedDirectory(sqlitePath: string, orgId: string): void {
  const db = new SqliteDatabase(sqlitePath);
  try {
    const now = new Date().toISOString();
    const person = db.prepare(
      `INSERT INTO people (id, org_id, name, search_text, email, phone, external_ref, trades, hourly_rate_minor, hourly_rate_currency, active, created_at, updated_at, version)
       VALUES (?, ?, ?, ?, NULL, NULL, NULL, '[]', NULL, NULL, 1, ?, ?, 1) ON CONFLICT DO NOTHING`,
    );
    const team = db.prepare(`INSERT INTO teams (id, org_id, name, search_text, active, created_at, updated_at, version) VALUES (?, ?, ?, ?, 1, ?, ?, 1) ON CONFLICT DO NOTHING`);
    const member = db.prepare('INSERT INTO team_members (team_id, person_id, org_id, position) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING');
    db.transaction(() => {
      for (let t = 0; t < BENCH_PEOPLE / BENCH_TEAM_SIZE; t++) team.run(benchTeamId(t), orgId, `Team ${t}`, `team ${t}`, now, now);
      for (let p = 0; p < BENCH_PEOPLE; p++) {
        person.run(benchPersonId(p), orgId, `Technician ${p}`, `technician ${p}`, now, now);
        member.run(benchTeamId(Math.floor(p / BENCH_TEAM_SIZE)), benchPersonId(p), orgId, p % BENCH_TEAM_SIZE);
      }
    })();
  } finally {
    db.close();
  }
}

/** Adds a category row directly (the seeded work orders need one to point at). */
export function seedCategory(sqlitePath: string, orgId: string, categoryId: string): void {
  const db = new SqliteDatabase(sqlitePath);
  try {
    const now = new Date().toISOString();
    db.prepare(
      `INSERT INTO categories (id, org_id, name, description, created_at, updated_at, version) VALUES (?, ?, ?, NULL, ?, ?, 1)
       ON CONFLICT DO NOTHING`,
    ).run(categoryId, orgId, `Benchmark ${categoryId}`, now, now);
  } finally {
    db.close();
  }
}

/** Per-status counts as the service reports them, next to what the rows say: they must agree. */
export function countersAgainstRows(sqlitePath: string, orgId: string): { counters: Record<string, number>; rows: Record<string, number> } {
  const db = new SqliteDatabase(sqlitePath, { readonly: true });
  try {
    const toMap = (list: { status: string; n: number }[]) => Object.fromEntries(list.filter((r) => r.n !== 0).map((r) => [r.status, r.n]));
    return {
      counters: toMap(db.prepare('SELECT status, count AS n FROM record_counters WHERE org_id = ? ORDER BY status').all(orgId) as { status: string; n: number }[]),
      rows: toMap(db.prepare('SELECT status, COUNT(*) AS n FROM records WHERE org_id = ? GROUP BY status ORDER BY status').all(orgId) as { status: string; n: number }[]),
    };
  } finally {
    db.close();
  }
}
