import { sql } from 'kysely';
import type { VersionedMigration } from '../migrate.js';

/**
 * `custom_field_value_counts`: per organization, entity, field key and exact value, how many entities
 * hold that value (the rows of custom_field_values). A list filtered by one exact `cf.<key>=value`
 * reads its `total` here instead of counting the value's index entries on every request, which cost
 * more the more entities share the value. A value is keyed by `text_value` (text, select, boolean,
 * date) or `number_value`, the other set to '' or 0: a key's type never changes, so the two never
 * meet, and neither may be NULL in a primary key.
 *
 * Triggers keep them, for the reasons of 0009 and 0029: every writer of custom_field_values counts,
 * a process of the previous release during a rolling upgrade, the bench seeders and an operator's
 * hand-written statement included. On PostgreSQL the triggers append deltas, for the reason of 0012
 * (no write waits on another's counter row); they run once per statement over its transition table,
 * so a create with five values, or a seeder's 50,000-row INSERT, appends one grouped row per value
 * instead of one per row. Readers add the counts and the deltas in one snapshot; the
 * `custom-field-count-fold` job folds them. SQLite has one writer: it counts in place.
 *
 * Safe to run again (SQLite migrations are not transactional): the counts are emptied and set from
 * the values after the triggers exist. On PostgreSQL that happens in the migration's transaction,
 * with writers held off by CREATE TRIGGER until it commits, and the deltas of an earlier run are
 * dropped with them; on SQLite each statement holds the one write lock, a value written between the
 * two is counted by its trigger, and the backfill's upsert sets its count again from the values.
 * Only custom_field_values is read: no records row is rewritten.
 */
export const customFieldValueCounts: VersionedMigration = {
  name: '0030-custom-field-value-counts',
  async up(db, dialect) {
    const real = dialect === 'postgres' ? 'double precision' : 'real';
    await sql`
      CREATE TABLE IF NOT EXISTS custom_field_value_counts (
        org_id text NOT NULL,
        entity text NOT NULL,
        field_key text NOT NULL,
        text_value text NOT NULL,
        number_value ${sql.raw(real)} NOT NULL,
        count bigint NOT NULL,
        PRIMARY KEY (org_id, entity, field_key, text_value, number_value)
      )`.execute(db);
    if (dialect === 'postgres') {
      await sql`
        CREATE TABLE IF NOT EXISTS custom_field_value_count_deltas (
          org_id text NOT NULL,
          entity text NOT NULL,
          field_key text NOT NULL,
          text_value text NOT NULL,
          number_value double precision NOT NULL,
          count_delta integer NOT NULL
        )`.execute(db);
      // the readers' sum for one value; the fold deletes every row, in no order
      await sql`CREATE INDEX IF NOT EXISTS custom_field_value_count_deltas_value ON custom_field_value_count_deltas (org_id, entity, field_key, text_value, number_value)`.execute(db);
      const grouped = (table: string, sign: string) =>
        `INSERT INTO custom_field_value_count_deltas (org_id, entity, field_key, text_value, number_value, count_delta)
         SELECT org_id, entity, field_key, coalesce(text_value, ''), coalesce(number_value, 0), ${sign}count(*)
         FROM ${table} GROUP BY 1, 2, 3, 4, 5;`;
      // Each branch reads only the transition tables its trigger declares (PL/pgSQL plans a statement when it first runs).
      await sql`
        CREATE OR REPLACE FUNCTION custom_field_values_counted() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF TG_OP IN ('UPDATE', 'DELETE') THEN
            ${sql.raw(grouped('removed', '-'))}
          END IF;
          IF TG_OP IN ('UPDATE', 'INSERT') THEN
            ${sql.raw(grouped('added', ''))}
          END IF;
          RETURN NULL;
        END
        $$`.execute(db);
      for (const trigger of ['custom_field_values_added', 'custom_field_values_removed', 'custom_field_values_changed']) {
        await sql`DROP TRIGGER IF EXISTS ${sql.id(trigger)} ON custom_field_values`.execute(db);
      }
      await sql`
        CREATE TRIGGER custom_field_values_added AFTER INSERT ON custom_field_values
        REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION custom_field_values_counted()`.execute(db);
      await sql`
        CREATE TRIGGER custom_field_values_removed AFTER DELETE ON custom_field_values
        REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION custom_field_values_counted()`.execute(db);
      await sql`
        CREATE TRIGGER custom_field_values_changed AFTER UPDATE ON custom_field_values
        REFERENCING OLD TABLE AS removed NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION custom_field_values_counted()`.execute(db);
      // The counts are set again below, from the values themselves.
      await sql`DELETE FROM custom_field_value_count_deltas`.execute(db);
    } else {
      const counted = sql`
        INSERT INTO custom_field_value_counts (org_id, entity, field_key, text_value, number_value, count)
        VALUES (NEW.org_id, NEW.entity, NEW.field_key, coalesce(NEW.text_value, ''), coalesce(NEW.number_value, 0), 1)
        ON CONFLICT (org_id, entity, field_key, text_value, number_value) DO UPDATE SET count = count + 1;`;
      const uncounted = sql`
        UPDATE custom_field_value_counts SET count = count - 1
        WHERE org_id = OLD.org_id AND entity = OLD.entity AND field_key = OLD.field_key
          AND text_value = coalesce(OLD.text_value, '') AND number_value = coalesce(OLD.number_value, 0);`;
      await sql`CREATE TRIGGER IF NOT EXISTS custom_field_values_added AFTER INSERT ON custom_field_values BEGIN ${counted} END`.execute(db);
      await sql`CREATE TRIGGER IF NOT EXISTS custom_field_values_removed AFTER DELETE ON custom_field_values BEGIN ${uncounted} END`.execute(db);
      await sql`CREATE TRIGGER IF NOT EXISTS custom_field_values_changed AFTER UPDATE ON custom_field_values BEGIN ${uncounted} ${counted} END`.execute(db);
    }
    await sql`DELETE FROM custom_field_value_counts`.execute(db);
    await sql`
      INSERT INTO custom_field_value_counts (org_id, entity, field_key, text_value, number_value, count)
      SELECT org_id, entity, field_key, coalesce(text_value, ''), coalesce(number_value, 0), count(*)
      FROM custom_field_values WHERE true GROUP BY 1, 2, 3, 4, 5
      ON CONFLICT (org_id, entity, field_key, text_value, number_value) DO UPDATE SET count = excluded.count`.execute(db);
  },
  async down(db, dialect) {
    for (const trigger of ['custom_field_values_added', 'custom_field_values_removed', 'custom_field_values_changed']) {
      if (dialect === 'postgres') await sql`DROP TRIGGER IF EXISTS ${sql.id(trigger)} ON custom_field_values`.execute(db);
      else await sql`DROP TRIGGER IF EXISTS ${sql.id(trigger)}`.execute(db);
    }
    if (dialect === 'postgres') {
      await sql`DROP FUNCTION IF EXISTS custom_field_values_counted()`.execute(db);
      await sql`DROP TABLE IF EXISTS custom_field_value_count_deltas`.execute(db);
    }
    await sql`DROP TABLE IF EXISTS custom_field_value_counts`.execute(db);
  },
};
