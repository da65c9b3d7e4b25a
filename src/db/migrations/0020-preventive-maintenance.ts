import { sql } from 'kysely';
import type { VersionedMigration } from '../migrate.js';

/**
 * Preventive maintenance: schedules and their occurrences. An occurrence's row is the proof that it
 * was decided: its primary key (schedule, occurrence key) lets exactly one work order be generated
 * for it, whatever number of workers race, because the work order and the row commit together.
 *
 * Every statement is `IF NOT EXISTS`: SQLite migrations are not transactional (see 0009).
 */
export const preventiveMaintenance: VersionedMigration = {
  name: '0020-preventive-maintenance',
  async up(db, dialect) {
    // What generated a work order (`source`, JSON) and the `dueAt` its record.overdue was sent for:
    // nullable columns with no default, so adding them rewrites no row (PostgreSQL and SQLite alike).
    for (const column of ['source', 'overdue_for']) {
      if (dialect === 'postgres') {
        await sql`ALTER TABLE records ADD COLUMN IF NOT EXISTS ${sql.raw(column)} text`.execute(db);
        continue;
      }
      const columns = await sql<{ name: string }>`SELECT name FROM pragma_table_info('records')`.execute(db);
      if (!columns.rows.some((existing) => existing.name === column)) await sql`ALTER TABLE records ADD COLUMN ${sql.raw(column)} text`.execute(db);
    }
    // the overdue job's scan: open work orders with a due date not yet announced, soonest first (finished and announced ones leave it)
    await sql`CREATE INDEX IF NOT EXISTS records_overdue_watch ON records (due_at) WHERE due_at IS NOT NULL AND completed_at IS NULL AND closed_at IS NULL AND cancelled_at IS NULL AND (overdue_for IS NULL OR overdue_for <> due_at)`.execute(db);

    await sql`
      CREATE TABLE IF NOT EXISTS schedules (
        id text PRIMARY KEY,
        org_id text NOT NULL REFERENCES organizations (id),
        name text NOT NULL,
        status text NOT NULL,
        template text NOT NULL,
        triggers text NOT NULL,
        lead_time text NOT NULL,
        overlap text NOT NULL,
        catch_up text NOT NULL,
        metadata text NOT NULL,
        trigger_state text NOT NULL,
        planned_through text,
        next_due_at text,
        next_key text,
        generate_at text,
        waits_for_record text,
        last_record_id text,
        created_at text NOT NULL,
        updated_at text NOT NULL,
        version integer NOT NULL
      )`.execute(db);
    // the generator's scan: schedules whose next work order is due for generation, soonest first
    await sql`CREATE INDEX IF NOT EXISTS schedules_generate ON schedules (generate_at) WHERE generate_at IS NOT NULL`.execute(db);
    // interval triggers waiting for their previous work order's completion
    await sql`CREATE INDEX IF NOT EXISTS schedules_waiting ON schedules (waits_for_record) WHERE waits_for_record IS NOT NULL`.execute(db);
    // an organization's schedules, newest first, and its incremental sync
    await sql`CREATE INDEX IF NOT EXISTS schedules_org ON schedules (org_id, id)`.execute(db);
    await sql`CREATE INDEX IF NOT EXISTS schedules_org_updated ON schedules (org_id, updated_at)`.execute(db);

    await sql`
      CREATE TABLE IF NOT EXISTS schedule_occurrences (
        schedule_id text NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
        key text NOT NULL,
        org_id text NOT NULL,
        due_at text,
        status text NOT NULL,
        record_id text,
        reason text,
        created_at text NOT NULL,
        PRIMARY KEY (schedule_id, key)
      )`.execute(db);
    // a schedule's recorded occurrences in a window (GET /schedules/{id}/occurrences)
    await sql`CREATE INDEX IF NOT EXISTS schedule_occurrences_due ON schedule_occurrences (schedule_id, due_at)`.execute(db);

    await sql`
      CREATE TABLE IF NOT EXISTS schedule_meters (
        meter_id text NOT NULL,
        schedule_id text NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
        org_id text NOT NULL,
        PRIMARY KEY (meter_id, schedule_id)
      )`.execute(db);
  },
};
