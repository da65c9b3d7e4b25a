import { DEFAULT_MIGRATION_TABLE, Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import type { Database, Db, DialectName } from './database.js';
import { ConfigError } from '../config.js';
import { isUndefinedTable } from './errors.js';
import { migrations } from './migrations/index.js';

/** A numbered migration; `dialect` lets the few dialect-specific column types differ. */
export interface VersionedMigration {
  name: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  up(db: Kysely<any>, dialect: DialectName): Promise<void>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  down?(db: Kysely<any>, dialect: DialectName): Promise<void>;
}

/** The database's schema belongs to a release this process cannot run beside; exits like any configuration error. */
export class SchemaVersionError extends ConfigError {
  override name = 'SchemaVersionError';
}

class ListedMigrations implements MigrationProvider {
  constructor(private readonly dialect: DialectName) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    const byName: Record<string, Migration> = {};
    for (const migration of migrations) {
      byName[migration.name] = {
        up: (db) => migration.up(db, this.dialect),
        ...(migration.down ? { down: (db) => migration.down!(db, this.dialect) } : {}),
      };
    }
    return byName;
  }
}

/** Brings the schema up to date. Safe to run from several processes: Kysely takes a lock. */
export async function migrateToLatest(database: Database): Promise<string[]> {
  if (database.dialect === 'sqlite') return runMigrations(database.db, database);
  // On one session of its own with no statement_timeout: building an index on a large table may take
  // longer than any request is allowed to.
  return database.db.connection().execute(async (session) => {
    await sql`SET statement_timeout = 0`.execute(session);
    try {
      return await runMigrations(session, database);
    } finally {
      // Fails only on a broken connection, which the pool then drops: the migration's own error matters more.
      await sql`RESET statement_timeout`.execute(session).catch(() => undefined);
    }
  });
}

async function runMigrations(db: Db, database: Database): Promise<string[]> {
  // Kysely refuses a database holding a migration it was not given ("corrupted migrations"). During a
  // rolling upgrade that is a newer release's migration, which is backward compatible by contract
  // (docs/deployment.md, Upgrades): a process of this release that starts again (restarted after a
  // crash, an OOM kill) must come up, as those still running keep serving.
  // On SQLite an older release must not run on a newer schema at all (the README's Upgrades say why).
  const { newer, missing } = await compareWithApplied(db, database);
  if (newer.length > 0) {
    if (database.dialect === 'sqlite') {
      throw new SchemaVersionError(
        `The database was migrated by a newer release (it holds ${newer.join(', ')}, unknown here); on SQLite an older release must not run on it: ` +
          'start the newer release, or restore the backup taken before the upgrade.',
      );
    }
    if (missing.length === 0) return [];
    throw new SchemaVersionError(
      `The database was migrated by another release (it holds ${newer.join(', ')}, unknown here) but lacks ${missing.join(', ')} of this one: ` +
        'run the release that migrated it, or restore a backup taken before.',
    );
  }
  const migrator = new Migrator({
    db,
    provider: new ListedMigrations(database.dialect),
    // Kysely finds its bookkeeping tables by introspecting every schema; name ours so that several
    // schemas in one PostgreSQL database (tests, tenants of a shared server) do not see each other's.
    ...(database.schema ? { migrationTableSchema: database.schema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    // A newer release's migration may have committed while this process waited for Kysely's lock:
    // the same case as above, met later.
    if (database.dialect === 'postgres') {
      const now = await compareWithApplied(db, database);
      if (now.newer.length > 0 && now.missing.length === 0) return [];
    }
    throw error instanceof Error ? error : new Error(String(error));
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * The migrations applied to the database that this release does not know (`newer`: a later release
 * applied them), and this release's migrations not yet applied (`missing`). Both empty on a database
 * this release migrated; `missing` is everything on one never migrated.
 */
export async function compareWithApplied(db: Db, database: Database): Promise<{ newer: string[]; missing: string[] }> {
  const table = database.schema ? sql.table(`${database.schema}.${DEFAULT_MIGRATION_TABLE}`) : sql.table(DEFAULT_MIGRATION_TABLE);
  let applied: Set<string>;
  try {
    applied = new Set((await sql<{ name: string }>`SELECT name FROM ${table}`.execute(db)).rows.map((row) => row.name));
  } catch (error) {
    if (!isUndefinedTable(error)) throw error;
    applied = new Set();
  }
  const known = new Set(migrations.map((migration) => migration.name));
  return {
    newer: [...applied].filter((name) => !known.has(name)).sort(),
    missing: migrations.map((migration) => migration.name).filter((name) => !applied.has(name)),
  };
}

/**
 * Whether the latest migration this code knows is applied (a newer one, applied by a newer release
 * during a rolling upgrade, is fine). False on a database that answers but was never migrated;
 * a database that does not answer throws.
 */
export async function schemaIsCurrent(database: Database): Promise<boolean> {
  const latest = migrations[migrations.length - 1]!.name;
  const table = database.schema ? sql.table(`${database.schema}.${DEFAULT_MIGRATION_TABLE}`) : sql.table(DEFAULT_MIGRATION_TABLE);
  try {
    const { rows } = await sql`SELECT name FROM ${table} WHERE name = ${latest}`.execute(database.db);
    return rows.length > 0;
  } catch (error) {
    if (isUndefinedTable(error)) return false;
    throw error;
  }
}
