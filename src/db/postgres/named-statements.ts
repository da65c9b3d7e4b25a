import type pg from 'pg';

/**
 * Runs the statements this process sends again and again as named (server-side prepared) statements
 * on each PostgreSQL connection, as drivers such as pgx and asyncpg do by default. Kysely sends every
 * query unnamed, so PostgreSQL parsed, analysed and planned each of a create's statements afresh on
 * every request; a named statement is parsed once per connection and then only bound and executed.
 *
 * Statements whose result columns come from `*` (SELECT *, RETURNING *) stay unnamed: after a
 * migration adds a column, PostgreSQL refuses to run a prepared statement whose result type changed
 * ("cached plan must not change result type"), and inside a transaction that error cannot be retried.
 * Every other kind of schema change is re-planned by PostgreSQL itself. `selectAll()` of one table is
 * sent with its columns by name (ExplicitColumnsPlugin), so most whole-row reads are named too.
 */
export function withNamedStatements(pool: pg.Pool): pg.Pool {
  const names = new Map<string, string | null>();
  const nameFor = (text: string): string | null => {
    let name = names.get(text);
    if (name === undefined) {
      name = names.size >= MAX_NAMED_STATEMENTS || RESULT_OF_STAR.test(text) ? null : `wo_${names.size.toString(36)}`;
      names.set(text, name);
    }
    return name;
  };
  const patched = new WeakSet<pg.PoolClient>();
  const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  // Kysely only calls `connect()` and `end()`; the pool's other callers (health checks) are unaffected.
  (pool as { connect: () => Promise<pg.PoolClient> }).connect = async () => {
    const client = await connect();
    if (!patched.has(client)) {
      patched.add(client);
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as { query: (...args: unknown[]) => unknown }).query = (text: unknown, values?: unknown, ...rest: unknown[]) => {
        const name = typeof text === 'string' && Array.isArray(values) ? nameFor(text) : null;
        return name ? query({ name, text, values }, ...rest) : query(text, values, ...rest);
      };
    }
    return client;
  };
  return pool;
}

/** Enough for every statement shape the service sends; ad-hoc shapes beyond it run unnamed. */
const MAX_NAMED_STATEMENTS = 1_000;

const RESULT_OF_STAR = /\b(select|returning)\s+(distinct\s+)?("?\w+"?\.)?\*|,\s*("?\w+"?\.)?\*/i;
