import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import type { Database, DialectName } from './database.js';
import { migrations } from './migrations/index.js';

/** A numbered migration; `dialect` lets the few dialect-specific column types differ. */
export interface VersionedMigration {
  name: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  up(db: Kysely<any>, dialect: DialectName): Promise<void>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  down?(db: Kysely<any>, dialect: DialectName): Promise<void>;
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
  // Kysely looks for its bookkeeping tables in every schema; naming ours keeps parallel test schemas apart.
  const migrator = new Migrator({
    db: database.db,
    provider: new ListedMigrations(database.dialect),
    ...(database.schema ? { migrationTableSchema: database.schema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
