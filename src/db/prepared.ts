import { CompiledQuery, type Compilable, type DialectAdapter, type QueryResult } from 'kysely';
import type { Executor } from './database.js';
import { fastPathOf, type FastPathOptions } from './sqlite/fast-path.js';
import { padInList } from './statement-shapes.js';

type Params = object;

/**
 * A hot query whose shape never changes, built and compiled once per database instead of on
 * every call: Kysely builds an operation tree and compiles it to SQL for each execution, and on the
 * create path that cost more than SQLite running the statements. When a query should be one, and
 * when not: see the header of src/db/sqlite/fast-path.ts, which runs it.
 *
 * `build` receives placeholders, not values: every `params.<name>` it reads becomes a bound
 * parameter whose value is filled in per call. It must therefore use each value only as a bound
 * value (never to decide the query's shape), and every call must pass the same keys (a table row
 * type with no optional fields, for instance).
 *
 * `returnBeforeCommit`: on SQLite a write outside a transaction returns before its group commits
 * (see `FastPathOptions` in sqlite/fast-path.ts for when that is safe).
 */
export function preparedQuery<P extends Params, R = unknown>(
  build: (executor: Executor, params: P) => Compilable<R>,
  options: FastPathOptions = {},
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
    // On SQLite the group-commit driver's fast path runs it; elsewhere Kysely does.
    const fastPath = fastPathOf(executor.getExecutor());
    if (fastPath) return fastPath.execute<R>(executor, compiled.sql, parameters, options);
    return executor.executeQuery(CompiledQuery.raw(compiled.sql, parameters) as CompiledQuery<R>);
  };
}

/**
 * preparedQuery for a query over a list of values of varying length (an `IN` list): the list is padded
 * to a power-of-two length (padInList) and each padded length gets its query, built and compiled
 * once. `build` receives the list as placeholders, one per padded entry, and must use them only as
 * bound values, as preparedQuery's `params`. The background jobs run such queries for every batch,
 * and building them anew each time was a large share of the webhook worker's CPU (bench/analysis.md,
 * session 24).
 * An empty list reaches `build` as an empty array: decide there what it means.
 */
export function preparedListQuery<P extends Params, V, R = unknown>(
  build: (executor: Executor, params: P, list: V[]) => Compilable<R>,
): (executor: Executor, params: P, list: readonly V[]) => Promise<QueryResult<R>> {
  const query = preparedListsQuery((executor, params: P, [list]: [V[]]) => build(executor, params, list));
  return (executor, params, list) => query(executor, params, [list as V[]]);
}

/**
 * preparedListQuery over several lists in one statement (a UNION of two `IN` lookups, say), each list
 * padded on its own: a query per combination of padded lengths, built and compiled once.
 */
export function preparedListsQuery<P extends Params, L extends unknown[][], R = unknown>(
  build: (executor: Executor, params: P, lists: L) => Compilable<R>,
): (executor: Executor, params: P, lists: Readonly<L>) => Promise<QueryResult<R>> {
  const byLengths = new Map<string, (executor: Executor, params: Record<string, unknown>) => Promise<QueryResult<R>>>();
  return (executor, params, lists) => {
    const padded = lists.map((list) => padInList(list));
    const lengths = padded.map((list) => list.length).join(',');
    let query = byLengths.get(lengths);
    if (!query) {
      const names = padded.map((list, l) => list.map((_value, i) => `${LIST_ENTRY_PREFIX}${l}:${i}`));
      query = preparedQuery((db, placeholders: Record<string, unknown>) => build(db, placeholders as P, names.map((list) => list.map((name) => placeholders[name])) as L));
      byLengths.set(lengths, query);
    }
    const values: Record<string, unknown> = { ...(params as Record<string, unknown>) };
    padded.forEach((list, l) => {
      list.forEach((value, i) => {
        values[`${LIST_ENTRY_PREFIX}${l}:${i}`] = value;
      });
    });
    return query(executor, values);
  };
}

// The list's entries as parameters, under names no caller's own parameter takes.
const LIST_ENTRY_PREFIX = '\u0000list:';

// A control character no real value starts with, so a placeholder cannot be mistaken for data.
const PLACEHOLDER_PREFIX = '\u0000param:';

function placeholder(name: string): string {
  return PLACEHOLDER_PREFIX + name;
}
