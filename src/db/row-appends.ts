import { CompiledQuery, type Insertable } from 'kysely';
import type { Executor } from './database.js';
import { isSqlite } from './dialect.js';
import { preparedQuery } from './prepared.js';
import type { Tables } from './tables.js';

type TableName = keyof Tables;
type Row = Record<string, unknown>;

/**
 * Rows a transaction appends to several tables in one step (a new work order, its history entry, its
 * count and its events), written together by `write`. On PostgreSQL they go out as ONE statement of
 * data-modifying CTEs: each statement is a round trip to the server, and a create's inserts were most
 * of its round trips. On SQLite, where a statement is a function call, each row is a prepared insert.
 *
 * For rows nobody reads back in the same step and that cannot conflict (fresh ids): an error in one
 * of them fails the statement as a whole, so it cannot be told apart from the others.
 */
export class RowAppends {
  private readonly tables = new Map<TableName, Row[]>();

  add<T extends TableName>(table: T, ...rows: Insertable<Tables[T]>[]): this {
    const list = this.tables.get(table) ?? [];
    list.push(...(rows as Row[]));
    this.tables.set(table, list);
    return this;
  }

  async write(executor: Executor): Promise<void> {
    const inserts = [...this.tables].filter(([, rows]) => rows.length > 0);
    this.tables.clear();
    if (inserts.length === 0) return;
    if (isSqlite(executor)) {
      for (const [table, rows] of inserts) for (const row of rows) await preparedInsert(table, row)(executor, row);
      return;
    }
    const parameters: unknown[] = [];
    const statements = inserts.map(([table, rows]) => {
      const columns = Object.keys(rows[0]!);
      const tuples = rows.map((row) => `(${columns.map((column) => `$${parameters.push(row[column])}`).join(', ')})`);
      return `INSERT INTO ${quote(table)} (${columns.map(quote).join(', ')}) VALUES ${tuples.join(', ')}`;
    });
    const last = statements.pop()!;
    const text = statements.length ? `WITH ${statements.map((statement, i) => `appended_${i} AS (${statement})`).join(', ')} ${last}` : last;
    await executor.executeQuery(CompiledQuery.raw(text, parameters));
  }
}

/** One compiled insert per table and column list (see preparedQuery). */
const preparedInserts = new Map<string, (executor: Executor, row: Row) => Promise<unknown>>();

function preparedInsert(table: TableName, row: Row): (executor: Executor, row: Row) => Promise<unknown> {
  const shape = `${table}(${Object.keys(row).join(',')})`;
  let insert = preparedInserts.get(shape);
  if (!insert) {
    insert = preparedQuery((db, values: Row) => db.insertInto(table).values(values as never));
    preparedInserts.set(shape, insert);
  }
  return insert;
}

function quote(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}
