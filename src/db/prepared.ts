import type { Compilable, DialectAdapter, QueryResult } from 'kysely';
import type { Executor } from './database.js';
import { executePrepared } from './sqlite-fast-path.js';

type Params = object;

/**
 * A hot query whose shape never changes, built and compiled once per database instead of on
 * every call: Kysely builds an operation tree and compiles it to SQL for each execution, and on the
 * create path that cost more than SQLite running the statements. When a query should be one, and
 * when not: see the header of src/db/sqlite-fast-path.ts, which runs it.
 *
 * `build` receives placeholders, not values: every `params.<name>` it reads becomes a bound
 * parameter whose value is filled in per call. It must therefore use each value only as a bound
 * value (never to decide the query's shape), and every call must pass the same keys (a table row
 * type with no optional fields, for instance).
 *
 * `returnBeforeCommit`: on SQLite a write outside a transaction returns before its group commits
 * (see `returnBeforeCommit` in sqlite-fast-path.ts for when that is safe).
 */
export function preparedQuery<P extends Params, R = unknown>(
  build: (executor: Executor, params: P) => Compilable<R>,
  options: { returnBeforeCommit?: boolean } = {},
): (executor: Executor, params: P) => Promise<QueryResult<R>> {
  // Compiled SQL differs per dialect (`?` vs `$1`), so it is kept per database (a transaction shares its adapter).
  const compiledByAdapter = new WeakMap<DialectAdapter, { sql: string; slots: (string | { constant: unknown })[] }>();

  const compile = (executor: Executor, names: string[]) => {
    const placeholders = Object.fromEntries(names.map((name) => [name, placeholder(name)])) as P;
    const compiled = build(executor, placeholders).compile();
    const slots = compiled.parameters.map((value) => {
      const name = typeof value === 'string' && value.startsWith(PLACEHOLDER_PREFIX) ? value.slice(PLACEHOLDER_PREFIX.length) : undefined;
      return name !== undefined && names.includes(name) ? name : { constant: value };
    });
    return { sql: compiled.sql, slots };
  };

  return (executor, params) => {
    const adapter = executor.getExecutor().adapter;
    let compiled = compiledByAdapter.get(adapter);
    if (!compiled) {
      compiled = compile(executor, Object.keys(params));
      compiledByAdapter.set(adapter, compiled);
    }
    const values = params as Record<string, unknown>;
    const parameters = compiled.slots.map((slot) => (typeof slot === 'string' ? values[slot] : slot.constant));
    return executePrepared<R>(executor, compiled.sql, parameters, options);
  };
}

// A control character no real value starts with, so a placeholder cannot be mistaken for data.
const PLACEHOLDER_PREFIX = '\u0000param:';

function placeholder(name: string): string {
  return PLACEHOLDER_PREFIX + name;
}
