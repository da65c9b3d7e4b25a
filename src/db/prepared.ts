import { CompiledQuery, type Compilable, type DialectAdapter, type QueryResult } from 'kysely';
import type { Executor } from './database.js';
import { fastPathOf, type FastPathOptions } from './sqlite/fast-path.js';
import { powerOfTwoLength } from './statement-shapes.js';

type Params = object;

/**
 * Where each bound parameter of a compiled query takes its value from, in order: a caller's named
 * parameter, an entry of one of its lists, or a value the query wrote in itself. Resolved once, at
 * compile time, so a call fills an array by position (no object of named values per call).
 */
type Slot = { readonly param: string } | { readonly list: number; readonly entry: number } | { readonly constant: unknown };

interface Shape {
  readonly sql: string;
  readonly slots: readonly Slot[];
}

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
  const shapes = new ShapesByAdapter();
  return (executor, params) => {
    const shape = shapes.get(executor, () => compileShape(Object.keys(params), [], (placeholders) => build(executor, placeholders as P)));
    return execute<R>(executor, shape, params as Record<string, unknown>, NO_LISTS, options);
  };
}

/**
 * preparedQuery for a query over a list of values of varying length (an `IN` list): the list is padded
 * to a power-of-two length by repeating its last value and each padded length gets its query, built
 * and compiled once. `build` receives the list as placeholders, one per padded entry, and must use them
 * only as bound values, as preparedQuery's `params`. The background jobs run such queries for every
 * batch, and building them anew each time was a large share of the webhook worker's CPU
 * (bench/analysis.md, session 24).
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
 * padded on its own: a query per combination of padded lengths, built and compiled once. Lists of the
 * same length stay aligned when padded (each repeats its own last entry), so two lists can carry
 * the two halves of pairs.
 */
export function preparedListsQuery<P extends Params, L extends unknown[][], R = unknown>(
  build: (executor: Executor, params: P, lists: L) => Compilable<R>,
): (executor: Executor, params: P, lists: Readonly<L>) => Promise<QueryResult<R>> {
  const byLengths = new Map<string, ShapesByAdapter>();
  return (executor, params, lists) => {
    let paddedLengths = '';
    for (const list of lists) paddedLengths += `${powerOfTwoLength(list.length)},`;
    let shapes = byLengths.get(paddedLengths);
    if (!shapes) {
      shapes = new ShapesByAdapter();
      byLengths.set(paddedLengths, shapes);
    }
    const shape = shapes.get(executor, () =>
      compileShape(
        Object.keys(params),
        lists.map((list) => powerOfTwoLength(list.length)),
        (placeholders, listPlaceholders) => build(executor, placeholders as P, listPlaceholders as L),
      ),
    );
    return execute<R>(executor, shape, params as Record<string, unknown>, lists, {});
  };
}

/** Compiled SQL differs per dialect (`?` vs `$1`), so a shape is kept per database (a transaction shares its adapter). */
class ShapesByAdapter {
  private readonly shapes = new WeakMap<DialectAdapter, Shape>();
  get(executor: Executor, compile: () => Shape): Shape {
    const adapter = executor.getExecutor().adapter;
    let shape = this.shapes.get(adapter);
    if (!shape) {
      shape = compile();
      this.shapes.set(adapter, shape);
    }
    return shape;
  }
}

function compileShape(
  names: string[],
  listLengths: number[],
  build: (placeholders: Record<string, string>, lists: string[][]) => Compilable<unknown>,
): Shape {
  const placeholders = Object.fromEntries(names.map((name) => [name, placeholder(name)]));
  const lists = listLengths.map((length, list) => Array.from({ length }, (_, entry) => listPlaceholder(list, entry)));
  const compiled = build(placeholders, lists).compile();
  const slots = compiled.parameters.map((value): Slot => {
    if (typeof value === 'string' && value.startsWith(PLACEHOLDER_PREFIX)) {
      const name = value.slice(PLACEHOLDER_PREFIX.length);
      if (names.includes(name)) return { param: name };
    }
    if (typeof value === 'string' && value.startsWith(LIST_ENTRY_PREFIX)) {
      const [list, entry] = value.slice(LIST_ENTRY_PREFIX.length).split(':').map(Number) as [number, number];
      if (entry < (listLengths[list] ?? 0)) return { list, entry };
    }
    return { constant: value };
  });
  return { sql: compiled.sql, slots };
}

function execute<R>(executor: Executor, shape: Shape, params: Record<string, unknown>, lists: readonly (readonly unknown[])[], options: FastPathOptions): Promise<QueryResult<R>> {
  const { slots } = shape;
  const parameters = new Array<unknown>(slots.length);
  for (let i = 0; i < slots.length; i++) {
    const slot = slots[i]!;
    if ('param' in slot) parameters[i] = params[slot.param];
    else if ('list' in slot) {
      // A padded entry past the list's end repeats its last value (see padInList).
      const list = lists[slot.list]!;
      parameters[i] = list[slot.entry < list.length ? slot.entry : list.length - 1];
    } else parameters[i] = slot.constant;
  }
  // On SQLite the group-commit driver's fast path runs it; elsewhere Kysely does.
  const fastPath = fastPathOf(executor.getExecutor());
  if (fastPath) return fastPath.execute<R>(executor, shape.sql, parameters, options);
  return executor.executeQuery(CompiledQuery.raw(shape.sql, parameters) as CompiledQuery<R>);
}

const NO_LISTS: readonly (readonly unknown[])[] = [];

// A control character no real value starts with, so a placeholder cannot be mistaken for data.
const PLACEHOLDER_PREFIX = '\u0000param:';

// A list's entries as placeholders, under names no caller's own parameter takes.
const LIST_ENTRY_PREFIX = '\u0000list:';

function placeholder(name: string): string {
  return PLACEHOLDER_PREFIX + name;
}

function listPlaceholder(list: number, entry: number): string {
  return `${LIST_ENTRY_PREFIX}${list}:${entry}`;
}
