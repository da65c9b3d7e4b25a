// The reference point for `create` on PostgreSQL: a minimal Fastify handler that validates its
// body, then writes one row and one outbox row in one transaction through a pg pool of 10. With
// REFERENCE_COUNTER=1 the transaction also adds one to a single counter row, as every create adds one
// to its organization's record_counters row: the price of every writer queueing on one hot row.
// Tables live in a schema of their own (`reference`) in the bench database named by DATABASE_URL.
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import pg from 'pg';
import { serveUntilStopped } from './lib/serve-until-stopped.js';

const withCounter = process.env.REFERENCE_COUNTER === '1';
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
pool.on('error', () => {});
await pool.query(`
  CREATE SCHEMA IF NOT EXISTS reference;
  CREATE TABLE IF NOT EXISTS reference.items (id text PRIMARY KEY, title text NOT NULL, created_at text NOT NULL);
  CREATE TABLE IF NOT EXISTS reference.outbox (seq bigserial PRIMARY KEY, type text NOT NULL, payload text NOT NULL, created_at text NOT NULL);
  CREATE TABLE IF NOT EXISTS reference.counters (name text PRIMARY KEY, count bigint NOT NULL);
  INSERT INTO reference.counters (name, count) VALUES ('items', 0) ON CONFLICT DO NOTHING`);

async function create(item: { id: string; title: string; createdAt: string }): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('INSERT INTO reference.items (id, title, created_at) VALUES ($1, $2, $3)', [item.id, item.title, item.createdAt]);
    await client.query('INSERT INTO reference.outbox (type, payload, created_at) VALUES ($1, $2, $3)', ['item.created', JSON.stringify(item), item.createdAt]);
    // Last, so the row lock is held only until the commit: the least contention one counter row can cost.
    if (withCounter) await client.query(`UPDATE reference.counters SET count = count + 1 WHERE name = 'items'`);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

const app = Fastify();
app.get('/', async () => ({ status: 'ok' }));
app.post(
  '/items',
  { schema: { body: { type: 'object', required: ['title'], additionalProperties: false, properties: { title: { type: 'string', minLength: 1, maxLength: 200 } } } } },
  async (request, reply) => {
    const { title } = request.body as { title: string };
    const item = { id: randomUUID(), title, createdAt: new Date().toISOString() };
    await create(item);
    return reply.code(201).send(item);
  },
);
await serveUntilStopped(app, () => void pool.end());
