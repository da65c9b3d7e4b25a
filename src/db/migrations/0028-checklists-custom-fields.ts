import { sql } from 'kysely';
import type { VersionedMigration } from '../migrate.js';
import { addColumn } from './add-column.js';

/**
 * Checklists (versioned templates, the versions work orders were given, answers, follow-ups) and
 * custom fields (definitions, and each value once more in a typed side table for the `cf.` filters).
 *
 * @NOTE: the columns added to records, assets and locations carry a constant default, so neither
 * database rewrites a row: SQLite stores the default in the schema, PostgreSQL 11+ in the catalogue
 * (a "fast default"). Existing rows read `{}` and `[]`, and a release without the columns keeps
 * inserting rows that get them. bench/tools/migration-timing.ts measures this on 1M work orders.
 */
export const checklistsAndCustomFields: VersionedMigration = {
  name: '0028-checklists-custom-fields',
  async up(db, dialect) {
    const real = dialect === 'postgres' ? 'double precision' : 'real';
    // `{key: value}` JSON, checked against the organization's custom fields on every write.
    for (const table of ['records', 'assets', 'locations']) await addColumn(db, dialect, table, 'custom_fields', "text NOT NULL DEFAULT '{}'");
    // The checklists the work order was given: [{checklistId, version, name}] JSON.
    await addColumn(db, dialect, 'records', 'checklists', "text NOT NULL DEFAULT '[]'");

    // A checklist's current version; every version (the current one included) is in checklist_versions.
    await sql`
      CREATE TABLE IF NOT EXISTS checklists (
        id text PRIMARY KEY,
        org_id text NOT NULL REFERENCES organizations (id),
        name text NOT NULL,
        version integer NOT NULL,
        items text NOT NULL,
        created_at text NOT NULL,
        updated_at text NOT NULL
      )`.execute(db);
    // the list, newest first; and its incremental sync (updatedAfter)
    await sql`CREATE INDEX IF NOT EXISTS checklists_org ON checklists (org_id, created_at, id)`.execute(db);
    await sql`CREATE INDEX IF NOT EXISTS checklists_org_updated ON checklists (org_id, updated_at)`.execute(db);
    await sql`
      CREATE TABLE IF NOT EXISTS checklist_versions (
        checklist_id text NOT NULL REFERENCES checklists (id),
        version integer NOT NULL,
        org_id text NOT NULL,
        name text NOT NULL,
        items text NOT NULL,
        created_at text NOT NULL,
        PRIMARY KEY (checklist_id, version)
      )`.execute(db);

    // One answer per item of a checklist a work order was given; `value` JSON, `failed` 1 for a failed item.
    await sql`
      CREATE TABLE IF NOT EXISTS checklist_answers (
        record_id text NOT NULL,
        checklist_id text NOT NULL,
        item_key text NOT NULL,
        org_id text NOT NULL,
        value text NOT NULL,
        failed integer NOT NULL,
        answered_by text NOT NULL,
        answered_at text NOT NULL,
        PRIMARY KEY (record_id, checklist_id, item_key)
      )`.execute(db);
    // The one follow-up work order of a failed item: the primary key is what makes it one, whatever
    // the number of processes answering the item at the same moment.
    await sql`
      CREATE TABLE IF NOT EXISTS checklist_follow_ups (
        record_id text NOT NULL,
        checklist_id text NOT NULL,
        item_key text NOT NULL,
        org_id text NOT NULL,
        follow_up_record_id text,
        created_at text NOT NULL,
        PRIMARY KEY (record_id, checklist_id, item_key)
      )`.execute(db);

    await sql`
      CREATE TABLE IF NOT EXISTS custom_fields (
        id text PRIMARY KEY,
        org_id text NOT NULL REFERENCES organizations (id),
        entity text NOT NULL,
        key text NOT NULL,
        label text NOT NULL,
        type text NOT NULL,
        options text,
        required integer NOT NULL,
        archived integer NOT NULL,
        created_at text NOT NULL,
        updated_at text NOT NULL,
        version integer NOT NULL
      )`.execute(db);
    // a key names one field per entity: the check of a value, the filter's lookup, and the 409 on a second one
    await sql`CREATE UNIQUE INDEX IF NOT EXISTS custom_fields_key ON custom_fields (org_id, entity, key)`.execute(db);
    // the list, newest first
    await sql`CREATE INDEX IF NOT EXISTS custom_fields_org ON custom_fields (org_id, created_at, id)`.execute(db);

    // Each custom-field value once more, typed: text, select, boolean ('true'/'false') and date
    // (ISO text, which sorts as dates do) in `text_value`; numbers in `number_value`. `created_at` is
    // the entity's (it never changes), the lists' sort key, so a page comes from the index in order.
    await sql`
      CREATE TABLE IF NOT EXISTS custom_field_values (
        entity_id text NOT NULL,
        field_key text NOT NULL,
        org_id text NOT NULL,
        entity text NOT NULL,
        text_value text,
        number_value ${sql.raw(real)},
        created_at text NOT NULL,
        PRIMARY KEY (entity_id, field_key)
      )`.execute(db);
    // `cf.<key>=` (exact) and `cf.<key>[gte]=`… on a date: the page and the total from the index alone
    await sql`CREATE INDEX IF NOT EXISTS custom_field_values_text ON custom_field_values (org_id, entity, field_key, text_value, created_at, entity_id)`.execute(db);
    // `cf.<key>[gte]=`… on a number, and `cf.<key>=` on one
    await sql`CREATE INDEX IF NOT EXISTS custom_field_values_number ON custom_field_values (org_id, entity, field_key, number_value, created_at, entity_id)`.execute(db);
  },
};
