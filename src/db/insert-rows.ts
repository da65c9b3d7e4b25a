import { CompiledQuery, type Insertable } from 'kysely';
import type { Executor } from './database.js';
import { isSqlite } from './dialect.js';
import { powerOfTwoChunks } from './statement-shapes.js';
import type { Tables } from './tables.js';

type TableName = keyof Tables;

/** Rows per multi-row INSERT on SQLite (a power of two; 256 rows × 15 columns stays under its parameter limit). */
const SQLITE_CHUNK = 256;

/**
 * Inserts many rows of one table, all with the same columns, in the order given, and answers how many
 * were stored: the background writers' batches (events a seal announces, log leaves and nodes, webhook
 * deliveries and attempts) and meter readings.
 *
 * PostgreSQL: one statement whatever the number of rows, its rows passed as ONE JSON array and
 * expanded by `json_populate_recordset`, which takes each column's type from the table itself. The
 * text depends only on the table and the columns, so it is prepared once per connection
 * (withNamedStatements) and planned once; a multi-row `VALUES` is a new text for every row count,
 * parsed and planned afresh, and the query builder visits every value to build it. `ORDER BY
 * ordinality` keeps the order given, which a serial column (the outbox's `seq`) follows.
 *
 * SQLite: multi-row `VALUES` in power-of-two chunks (src/db/statement-shapes.ts says why), the
 * text written here and kept per shape, the values passed as they are: the query builder visited and
 * froze every value of a 1,000-reading batch (a quarter of its CPU outside SQLite itself). A value
 * left undefined is stored as NULL, as PostgreSQL's JSON path does.
 */
export async function insertRows<T extends TableName>(executor: Executor, table: T, rows: readonly Insertable<Tables[T]>[], options: InsertRowsOptions = {}): Promise<number> {
  if (rows.length === 0) return 0;
  const conflict = options.skipConflictsOn ? ` ON CONFLICT (${options.skipConflictsOn.map(quote).join(', ')}) DO NOTHING` : '';
  let stored = 0;
  if (isSqlite(executor)) {
    const columns = Object.keys(rows[0]!);
    for (const chunk of powerOfTwoChunks(rows, SQLITE_CHUNK)) {
      const parameters: unknown[] = [];
      for (const row of chunk) for (const column of columns) parameters.push((row as Record<string, unknown>)[column] ?? null);
      const result = await executor.executeQuery(CompiledQuery.raw(sqliteInsertText(table, columns, chunk.length) + conflict, parameters));
      stored += Number(result.numAffectedRows ?? 0);
    }
    return stored;
  }
  const columns = Object.keys(rows[0]!).map(quote).join(', ');
  const text = `INSERT INTO ${quote(table)} (${columns}) SELECT ${columns} FROM json_populate_recordset(NULL::${quote(table)}, $1::json) WITH ORDINALITY AS given ORDER BY given.ordinality${conflict}`;
  const result = await executor.executeQuery(CompiledQuery.raw(text, [wellFormedJson(JSON.stringify(rows))]));
  return Number(result.numAffectedRows ?? 0);
}

export interface InsertRowsOptions {
  /**
   * The columns of a unique index: a row that would repeat a stored one there is left out (`ON
   * CONFLICT … DO NOTHING`, on that index only: every other constraint still fails the insert). The
   * answer then counts only the rows stored.
   */
  skipConflictsOn?: readonly string[];
}

/**
 * JSON.stringify writes a lone surrogate (half of a pair, as slicing a string can leave) as a `\udXXX`
 * escape, which PostgreSQL's JSON refuses to turn into text. A bound text value in its place is sent
 * as UTF-8, where it becomes U+FFFD: the same happens here, so both ways store the same text. Only
 * lone surrogates are escaped (pairs are written as they are), and an escape is one only after an
 * even run of backslashes (`\\ud800` is a backslash followed by the letters "ud800").
 */
export function wellFormedJson(json: string): string {
  return json.includes('\\ud') ? json.replace(LONE_SURROGATE_ESCAPE, '\\ufffd') : json;
}

const LONE_SURROGATE_ESCAPE = /(?<=(?:^|[^\\])(?:\\\\)*)\\ud[89a-f][0-9a-f]{2}/g;

const sqliteInsertTexts = new Map<string, string>();

/** `INSERT INTO t (a, b) VALUES (?, ?), (?, ?)…` for `rowCount` rows: one text per table, columns and power-of-two count. */
function sqliteInsertText(table: string, columns: readonly string[], rowCount: number): string {
  const key = `${table}\0${columns.join('\0')}\0${rowCount}`;
  let text = sqliteInsertTexts.get(key);
  if (text === undefined) {
    const tuple = `(${columns.map(() => '?').join(', ')})`;
    text = `INSERT INTO ${quote(table)} (${columns.map(quote).join(', ')}) VALUES ${Array.from({ length: rowCount }, () => tuple).join(', ')}`;
    sqliteInsertTexts.set(key, text);
  }
  return text;
}

function quote(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}
