import type { VersionedMigration } from '../migrate.js';

/**
 * Meters (hour counters, odometers, thermometers…) and their readings, for preventive maintenance's
 * meter and threshold triggers. A meter keeps a copy of its latest reading by `read_at`, written in
 * the readings' transaction, so lists and triggers need no scan of the readings.
 *
 * Every statement is `IF NOT EXISTS`: SQLite migrations are not transactional (see 0009).
 */
export const meters: VersionedMigration = {
  name: '0019-meters',
  async up(db) {
    await db.schema
      .createTable('meters')
      .ifNotExists()
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
      // The foreign key refuses a meter on an asset being deleted concurrently, and the asset's delete while meters are on it.
      .addColumn('asset_id', 'text', (c) => c.references('assets.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('unit', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('last_value', 'double precision')
      .addColumn('last_read_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .execute();
    // the meter list, newest first
    await db.schema.createIndex('meters_org_created').ifNotExists().on('meters').columns(['org_id', 'created_at', 'id']).execute();
    // the assetId filter, and the foreign-key check of an asset's delete ("are meters still on it?")
    await db.schema.createIndex('meters_asset').ifNotExists().on('meters').columns(['asset_id', 'created_at', 'id']).execute();

    await db.schema
      .createTable('meter_readings')
      .ifNotExists()
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('meter_id', 'text', (c) => c.notNull().references('meters.id'))
      .addColumn('value', 'double precision', (c) => c.notNull())
      .addColumn('read_at', 'text', (c) => c.notNull())
      .addColumn('external_id', 'text')
      .addColumn('reset', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    // a meter's readings newest first, the neighbours of a late reading by read_at, and a meter's delete
    await db.schema.createIndex('meter_readings_meter_read').ifNotExists().on('meter_readings').columns(['meter_id', 'read_at', 'id']).execute();
    // an externalId is counted once per meter: the batch's duplicate lookup (NULLs, readings without one, never collide)
    await db.schema.createIndex('meter_readings_meter_external').ifNotExists().unique().on('meter_readings').columns(['meter_id', 'external_id']).execute();
  },
  async down(db) {
    await db.schema.dropTable('meter_readings').ifExists().execute();
    await db.schema.dropTable('meters').ifExists().execute();
  },
};
