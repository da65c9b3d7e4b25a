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

  /**
   * PostgreSQL only: writes the rows as ONE statement, outside any transaction (a single statement
   * commits or fails as a whole), and only if `conditions` hold: every row of `existing` is there, and
   * the `claim` row (an Idempotency-Key's answer) was inserted rather than found taken. A whole idempotent
   * create is then one round trip, where BEGIN, the reference checks, the rows, the answer and COMMIT
   * were five. Nothing is written when a condition fails; the outcome says which.
   */
  async writeIf(executor: Executor, conditions: AppendConditions): Promise<ConditionalOutcome> {
    if (isSqlite(executor)) throw new Error('RowAppends.writeIf runs on PostgreSQL only');
    const parameters: unknown[] = [];
    const bind = (value: unknown) => `$${parameters.push(value)}`;
    const ctes: string[] = [];
    const required = (conditions.existing ?? []).map((reference, i) => {
      const lookup = `SELECT 1 FROM ${quote(reference.table)} WHERE "id" = ${bind(reference.id)} AND "org_id" = ${bind(reference.orgId)}`;
      if (!reference.lockForShare) return `EXISTS (${lookup})`;
      ctes.push(`locked_${i} AS (${lookup} FOR SHARE)`);
      return `EXISTS (SELECT 1 FROM locked_${i})`;
    });
    ctes.push(`gate AS (SELECT 1 AS ok${required.length ? ` WHERE ${required.join(' AND ')}` : ''})`);
    const insertFrom = (table: string, row: Row, source: string) => {
      const columns = Object.keys(row);
      return `INSERT INTO ${quote(table)} (${columns.map(quote).join(', ')}) SELECT ${columns.map((column) => bind(row[column])).join(', ')} FROM ${source}`;
    };
    let source = 'gate';
    if (conditions.claim) {
      const { table, row, conflictColumns } = conditions.claim;
      ctes.push(`claimed AS (${insertFrom(table, row, 'gate')} ON CONFLICT (${conflictColumns.map(quote).join(', ')}) DO NOTHING RETURNING 1 AS ok)`);
      source = 'claimed';
    }
    let n = 0;
    for (const [table, rows] of this.tables) {
      // Sub-statements run in no given order; a table's rows must take their sequence numbers (events
      // in the outbox) in the order added, so each of its inserts reads the row of the one before.
      let previous = source;
      for (const row of rows) {
        const name = `appended_${n++}`;
        ctes.push(`${name} AS (${insertFrom(table, row, previous)}${rows.length > 1 ? ' RETURNING 1 AS ok' : ''})`);
        previous = name;
      }
    }
    this.tables.clear();
    const text = `WITH ${ctes.join(', ')} SELECT (SELECT count(*) FROM gate) AS allowed, (SELECT count(*) FROM ${source}) AS written`;
    const { rows } = await executor.executeQuery<{ allowed: number; written: number }>(CompiledQuery.raw(text, parameters));
    const [outcome] = rows;
    if (Number(outcome?.written) > 0) return 'written';
    return Number(outcome?.allowed) > 0 ? 'claim_taken' : 'missing';
  }
}

/** What must hold for RowAppends.writeIf to write its rows. */
export interface AppendConditions {
  /**
   * Rows of an organization that must exist. `lockForShare` keeps one from being deleted until the
   * statement commits: for references no foreign key protects.
   */
  existing?: { table: TableName; id: string; orgId: string; lockForShare?: boolean }[];
  /** A row that must be inserted, not found already there (by `conflictColumns`), for the rest to be written. */
  claim?: { table: TableName; row: Row; conflictColumns: string[] };
}

export type ConditionalOutcome = 'written' | 'missing' | 'claim_taken';

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
