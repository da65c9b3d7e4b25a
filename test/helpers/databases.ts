import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/db/database.js';

export type TestDialect = 'sqlite' | 'postgres';

export const POSTGRES_URL = process.env.WO_TEST_DATABASE_URL;

/** SQLite always; PostgreSQL too when WO_TEST_DATABASE_URL is set (scripts/run-tests.mjs says when it is not). */
export const TEST_DIALECTS: TestDialect[] = POSTGRES_URL ? ['sqlite', 'postgres'] : ['sqlite'];

// Session-level advisory lock taken around every schema drop and every schema's migration.
const SCHEMA_CHANGE_LOCK = 0x574f5453; // "WOTS"

/**
 * Runs `work` while no other test process drops or migrates a schema. Kysely's migrator looks for its
 * tables by introspecting every schema of the database; a schema dropped by a parallel test file
 * at that moment makes the introspection fail ("schema … does not exist"). Tests only: in
 * production nothing drops schemas, and concurrent migrations already share Kysely's own lock.
 */
export async function withSchemaChangeLock<T>(work: () => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [SCHEMA_CHANGE_LOCK]);
    return await work();
  } finally {
    await client.end(); // ends the session, which releases the lock
  }
}

/** A fresh, empty PostgreSQL schema for one test; dropped by the returned function. */
export async function createPostgresSchema(): Promise<{ schema: string; drop: () => Promise<void> }> {
  if (!POSTGRES_URL) throw new Error('WO_TEST_DATABASE_URL is not set');
  const schema = `wo_test_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA "${schema}"`);
  } finally {
    await client.end();
  }
  return {
    schema,
    async drop() {
      await withSchemaChangeLock(async () => {
        const dropper = new pg.Client({ connectionString: POSTGRES_URL });
        await dropper.connect();
        try {
          await dropper.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        } finally {
          await dropper.end();
        }
      });
    },
  };
}

/**
 * A PostgreSQL database of its own, for child processes: they cannot be handed a schema the way
 * in-process tests are. Dropped (with whatever is still connected) by the returned function.
 */
export async function createPostgresDatabase(prefix: string): Promise<{ url: string; drop: () => Promise<void> }> {
  if (!POSTGRES_URL) throw new Error('WO_TEST_DATABASE_URL is not set');
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const dropper = new pg.Client({ connectionString: POSTGRES_URL });
      await dropper.connect();
      try {
        await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await dropper.end();
      }
    },
  };
}

/**
 * An empty database of `dialect` with no migrations run, for tests of the database layer that make
 * their own tables: a SQLite file in a temporary directory, or a fresh PostgreSQL schema. `close`
 * closes it and removes the file or drops the schema.
 */
export async function openEmptyDatabase(dialect: TestDialect): Promise<{ database: Database; close: () => Promise<void> }> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(path.join(tmpdir(), 'wo-empty-'));
    const database = openDatabase({ sqlitePath: path.join(dir, 'empty.sqlite') });
    return {
      database,
      async close() {
        await database.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const { schema, drop } = await createPostgresSchema();
  const database = openDatabase({ url: POSTGRES_URL!, schema });
  return {
    database,
    async close() {
      await database.close();
      await drop();
    },
  };
}
