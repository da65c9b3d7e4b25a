import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';

/** Rows of a table in a service's SQLite database, read beside the running service (WAL lets both in). */
export async function sqliteRowCount(dataDir: string, table: string): Promise<number> {
  const db = new SqliteDatabase(path.join(dataDir, 'wo.sqlite'), { readonly: true });
  try {
    return Number((db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n);
  } finally {
    db.close();
  }
}

/** Rows of a table in the bench's PostgreSQL database. */
export async function postgresRowCount(url: string, table: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);
  } finally {
    await client.end();
  }
}
