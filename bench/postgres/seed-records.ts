import pg from 'pg';
import type { RecordStatus } from '../../src/records/schemas.js';
import { assigneeMatchesSql, BENCH_PEOPLE, BENCH_TEAM_SIZE, benchPersonId, benchTeamId, defaultNewestMs, seededCustomFieldRows, seededRecord, type SeedOptions, type SeedResult, type SeededRecord } from '../lib/seed-records.js';

const BATCH = 50_000;

// The varying columns travel as one array each and come back as rows through unnest, in order.
const ARRAY_COLUMNS: [Exclude<keyof SeededRecord, 'assigneeRows'>, string][] = [
  ['id', 'id'],
  ['status', 'status'],
  ['address', 'address'],
  ['requesterName', 'requester_name'],
  ['description', 'description'],
  ['priority', 'priority'],
  ['assignee', 'assignee'],
  ['assignees', 'assignees'],
  ['externalRef', 'external_ref'],
  ['resolutionNotes', 'resolution_notes'],
  ['completedAt', 'completed_at'],
  ['closedAt', 'closed_at'],
  ['cancelledAt', 'cancelled_at'],
  ['createdAt', 'created_at'],
];

// The last array is the custom_fields JSON of each row.
const INSERT_BATCH = `
  INSERT INTO records (org_id, category_id, ${ARRAY_COLUMNS.map(([, column]) => column).join(', ')}, custom_fields,
                       due_at, asset_id, location_id, metadata, updated_at, version)
  SELECT $1, $2, s.*, NULL, NULL, NULL, '{}', s.created_at, 1
    FROM unnest(${[...ARRAY_COLUMNS, null].map((_, i) => `$${i + 3}::text[]`).join(', ')}) AS s(${ARRAY_COLUMNS.map(([, column]) => column).join(', ')}, custom_fields)`;

/**
 * Writes work orders straight into the bench database, the same rows the SQLite seeder writes
 * (seededRecord): one INSERT … SELECT FROM unnest(arrays) per 50,000 rows, so a million rows take 20
 * statements instead of a million. Then the status counts, and VACUUM ANALYZE (see below).
 * Called again on the same organization it appends older rows, as the SQLite seeder does.
 */
export async function seedRecordsOnPostgres(databaseUrl: string, options: SeedOptions): Promise<SeedResult> {
  const started = performance.now();
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    // Throw-away benchmark data: a server crash during seeding loses nothing of value.
    await client.query('SET synchronous_commit = off');
    const existing = Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM records WHERE org_id = $1', [options.orgId])).rows[0]!.n);
    const newest = defaultNewestMs(options.newestAt);
    const byStatus: Partial<Record<RecordStatus, number>> = {};
    for (let from = 0; from < options.count; from += BATCH) {
      const columns = ARRAY_COLUMNS.map(() => [] as (string | null)[]);
      const assignees: [string[], string[], string[], string[]] = [[], [], [], []];
      const customFields: string[] = [];
      const values: [string[], string[], (string | null)[], (number | null)[], string[]] = [[], [], [], [], []];
      for (let i = from; i < Math.min(options.count, from + BATCH); i++) {
        const row = seededRecord(existing + i, newest);
        ARRAY_COLUMNS.forEach(([field], c) => columns[c]!.push(row[field]));
        const fields = options.customFields ? seededCustomFieldRows(options.customFields(existing + i)) : { json: '{}', rows: [] };
        customFields.push(fields.json);
        for (const value of fields.rows) [row.id, value.key, value.text, value.number, row.createdAt].forEach((v, c) => (values[c] as unknown[]).push(v));
        for (const assignee of row.assigneeRows) [row.id, assignee.id, assignee.type, row.createdAt].forEach((value, c) => assignees[c]!.push(value));
        byStatus[row.status] = (byStatus[row.status] ?? 0) + 1;
      }
      await client.query(INSERT_BATCH, [options.orgId, options.categoryId, ...columns, customFields]);
      if (values[0].length > 0) {
        // Migration 0030's statement trigger appends one count delta per value of the batch (folded by the service's job).
        await client.query(
          `INSERT INTO custom_field_values (org_id, entity, entity_id, field_key, text_value, number_value, created_at)
           SELECT $1, 'record', s.* FROM unnest($2::text[], $3::text[], $4::text[], $5::double precision[], $6::text[]) AS s(entity_id, field_key, text_value, number_value, created_at)`,
          [options.orgId, ...values],
        );
      }
      await client.query(
        `INSERT INTO record_assignees (org_id, record_id, assignee_id, assignee_type, created_at)
         SELECT $1, s.* FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS s(record_id, assignee_id, assignee_type, created_at)`,
        [options.orgId, ...assignees],
      );
    }
    await client.query(assigneeMatchesSql('$1'), [options.orgId]);
    // A synchronous commit flushes the WAL of every asynchronous one before it. VACUUM marks a page
    // all-visible only once its rows' commits are flushed (their hint bits cannot be set before), so
    // right after unflushed inserts it left the newest pages out of the visibility map, and index-only
    // scans (an assigneeId page and its count; a deep page's ids) visited the heap (session 35).
    await client.query('SET synchronous_commit = on');
    await seedStatusCounts(client, options.orgId, byStatus);
    // Autovacuum may be off (it is on the shared test cluster) or not yet run: without the visibility
    // map a deep page cannot be an index-only scan, and without statistics the planner guesses.
    await client.query('VACUUM (ANALYZE) records');
    await client.query('VACUUM (ANALYZE) record_counters');
    await client.query('VACUUM (ANALYZE) record_assignees');
    await client.query('VACUUM (ANALYZE) record_assignee_matches');
    if (options.customFields) await client.query('VACUUM (ANALYZE) custom_field_values');
    return { inserted: options.count, totalInOrg: existing + options.count, byStatus, seconds: (performance.now() - started) / 1000 };
  } finally {
    await client.end();
  }
}

/**
 * Adds the seeded rows to the organization's status counts, which `total` is read from
 * (src/records/record-counts-postgres.ts: the folded rows plus the deltas not yet folded, summed on read). Adding
 * to the folded row is exact and leaves nothing to fold. Kept apart: the one place to change should
 * the layout of the counts change again.
 */
async function seedStatusCounts(client: pg.Client, orgId: string, byStatus: Partial<Record<RecordStatus, number>>): Promise<void> {
  for (const [status, count] of Object.entries(byStatus)) {
    await client.query(
      `INSERT INTO record_counters (org_id, status, count) VALUES ($1, $2, $3)
       ON CONFLICT (org_id, status) DO UPDATE SET count = record_counters.count + excluded.count`,
      [orgId, status, count],
    );
  }
}

/** The people and teams the seeded work orders name (BENCH_PEOPLE), added directly; again changes nothing. */
export async function seedDirectoryOnPostgres(databaseUrl: string, orgId: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const now = new Date().toISOString();
    const teams = BENCH_PEOPLE / BENCH_TEAM_SIZE;
    const people = Array.from({ length: BENCH_PEOPLE }, (_, p) => p);
    await client.query(
      `INSERT INTO teams (id, org_id, name, search_text, active, created_at, updated_at, version)
       SELECT id, $1, name, lower(name), 1, $2, $2, 1 FROM unnest($3::text[], $4::text[]) AS s(id, name) ON CONFLICT DO NOTHING`,
      [orgId, now, Array.from({ length: teams }, (_, t) => benchTeamId(t)), Array.from({ length: teams }, (_, t) => `Team ${t}`)],
    );
    await client.query(
      `INSERT INTO people (id, org_id, name, search_text, trades, active, created_at, updated_at, version)
       SELECT id, $1, name, lower(name), '[]', 1, $2, $2, 1 FROM unnest($3::text[], $4::text[]) AS s(id, name) ON CONFLICT DO NOTHING`,
      [orgId, now, people.map(benchPersonId), people.map((p) => `Technician ${p}`)],
    );
    await client.query(
      `INSERT INTO team_members (team_id, person_id, org_id, position)
       SELECT team_id, person_id, $1, position FROM unnest($2::text[], $3::text[], $4::int[]) AS s(team_id, person_id, position) ON CONFLICT DO NOTHING`,
      [orgId, people.map((p) => benchTeamId(Math.floor(p / BENCH_TEAM_SIZE))), people.map(benchPersonId), people.map((p) => p % BENCH_TEAM_SIZE)],
    );
    await client.query('VACUUM (ANALYZE) team_members');
  } finally {
    await client.end();
  }
}

/** Adds a category row directly (the seeded work orders need one to point at). */
export async function seedCategoryOnPostgres(databaseUrl: string, orgId: string, categoryId: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const now = new Date().toISOString();
    await client.query(
      `INSERT INTO categories (id, org_id, name, description, created_at, updated_at, version) VALUES ($1, $2, $3, NULL, $4, $4, 1)
       ON CONFLICT DO NOTHING`,
      [categoryId, orgId, `Benchmark ${categoryId}`, now],
    );
  } finally {
    await client.end();
  }
}
