import type { VersionedMigration } from '../migrate.js';

/** Locations (a hierarchy through parent_id) and the assets that sit in them. */
export const assetsAndLocations: VersionedMigration = {
  name: '0002-assets-locations',
  async up(db) {
    await db.schema
      .createTable('locations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
      // The foreign key refuses a child whose parent is being deleted concurrently.
      .addColumn('parent_id', 'text', (c) => c.references('locations.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      // Lower-cased in the application so `q` matches the same rows on SQLite and PostgreSQL.
      .addColumn('name_search', 'text', (c) => c.notNull())
      .addColumn('address', 'text')
      .addColumn('latitude', 'double precision')
      .addColumn('longitude', 'double precision')
      .addColumn('external_ref', 'text')
      .addColumn('metadata', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .execute();
    // the location list, newest first (also the scan a `q` search filters)
    await db.schema.createIndex('locations_org_created').on('locations').columns(['org_id', 'created_at', 'id']).execute();
    // the parentId filter (children, or top-level with parent_id IS NULL) and "has children?" before a delete
    await db.schema.createIndex('locations_org_parent').on('locations').columns(['org_id', 'parent_id', 'created_at', 'id']).execute();

    await db.schema
      .createTable('assets')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('name_search', 'text', (c) => c.notNull())
      .addColumn('tag', 'text', (c) => c.notNull())
      .addColumn('tag_search', 'text', (c) => c.notNull())
      .addColumn('serial_number', 'text')
      .addColumn('manufacturer', 'text')
      .addColumn('model', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('location_id', 'text', (c) => c.references('locations.id'))
      .addColumn('external_ref', 'text')
      .addColumn('metadata', 'text', (c) => c.notNull())
      .addColumn('retired_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      // asset tags are unique within an organization (409 already_exists), free across organizations
      .addUniqueConstraint('assets_org_tag', ['org_id', 'tag'])
      .execute();
    // the asset list, newest first (also the scan a `q` search filters)
    await db.schema.createIndex('assets_org_created').on('assets').columns(['org_id', 'created_at', 'id']).execute();
    // the list filtered by status
    await db.schema.createIndex('assets_org_status_created').on('assets').columns(['org_id', 'status', 'created_at', 'id']).execute();
    // the locationId filter and "does this location still hold assets?" before deleting it
    await db.schema.createIndex('assets_location').on('assets').columns(['location_id', 'created_at', 'id']).execute();
  },
  async down(db) {
    await db.schema.dropTable('assets').execute();
    await db.schema.dropTable('locations').execute();
  },
};
