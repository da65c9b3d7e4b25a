import { sql } from 'kysely';
import type { VersionedMigration } from '../migrate.js';

/**
 * Most work orders name neither an asset nor a location, yet every create paid a B-tree insert into
 * `records_asset` and `records_location` for a NULL key no query ever looks up. Partial indexes skip
 * those rows; `asset_id = ?` (and `location_id = ?`) imply IS NOT NULL, so both SQLite and PostgreSQL
 * still use them for the same queries.
 */
export const createPathIndexes: VersionedMigration = {
  name: '0007-create-path-indexes',
  async up(db) {
    await db.schema.dropIndex('records_asset').execute();
    await db.schema.dropIndex('records_location').execute();
    // an asset's work orders (GET /assets/{id}/records, assetId filter, "is this asset still used?")
    await db.schema.createIndex('records_asset').on('records').columns(['asset_id', 'created_at', 'id']).where(sql.ref('asset_id'), 'is not', null).execute();
    // a location's work orders (locationId filter)
    await db.schema.createIndex('records_location').on('records').columns(['location_id', 'created_at', 'id']).where(sql.ref('location_id'), 'is not', null).execute();
  },
  async down(db) {
    await db.schema.dropIndex('records_asset').execute();
    await db.schema.dropIndex('records_location').execute();
    await db.schema.createIndex('records_asset').on('records').columns(['asset_id', 'created_at', 'id']).execute();
    await db.schema.createIndex('records_location').on('records').columns(['location_id', 'created_at', 'id']).execute();
  },
};
