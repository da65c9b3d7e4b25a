import type SqliteDatabase from 'better-sqlite3';
import { SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, type DatabaseIntrospector, type Dialect, type DialectAdapter, type Driver, type Kysely, type QueryCompiler } from 'kysely';
import { FastPathSqliteAdapter, SqliteFastPath } from './fast-path.js';
import { GroupCommitSqliteDriver, type GroupCommitOptions } from './group-commit.js';

/** SQLite for Kysely with group commit (GroupCommitSqliteDriver) and its fast path (SqliteFastPath). */
export class GroupCommitSqliteDialect implements Dialect {
  private driver: GroupCommitSqliteDriver | undefined;

  constructor(
    private readonly sqlite: SqliteDatabase.Database,
    private readonly options: GroupCommitOptions = {},
  ) {}

  createDriver(): Driver {
    this.driver = new GroupCommitSqliteDriver(this.sqlite, this.options);
    return this.driver;
  }

  createQueryCompiler(): QueryCompiler {
    return new SqliteQueryCompiler();
  }

  // Kept a subclass of Kysely's own adapter class: code that asks "is this SQLite?" checks `instanceof SqliteAdapter`.
  createAdapter(): DialectAdapter {
    // Kysely creates the driver before the adapter; a transaction shares its database's adapter.
    return this.driver ? new FastPathSqliteAdapter(new SqliteFastPath(this.driver)) : new SqliteAdapter();
  }

  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new SqliteIntrospector(db);
  }
}
