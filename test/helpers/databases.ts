import { randomBytes } from 'node:crypto';
import pg from 'pg';

export type TestDialect = 'sqlite' | 'postgres';

export const POSTGRES_URL = process.env.WO_TEST_DATABASE_URL;

/** SQLite always; PostgreSQL too when WO_TEST_DATABASE_URL is set (scripts/run-tests.mjs says when it is not). */
export const TEST_DIALECTS: TestDialect[] = POSTGRES_URL ? ['sqlite', 'postgres'] : ['sqlite'];

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
      const dropper = new pg.Client({ connectionString: POSTGRES_URL });
      await dropper.connect();
      try {
        await dropper.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await dropper.end();
      }
    },
  };
}
