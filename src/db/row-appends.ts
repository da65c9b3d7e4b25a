import { CompiledQuery, type Insertable } from 'kysely';
import type { Executor } from './database.js';
import { isSqlite } from './dialect.js';
import { isUniqueViolation } from './errors.js';
import { preparedQuery } from './prepared.js';
import { inOrganizationSql } from './organization-check.js';
import type { Tables } from './tables.js';
import { TABLE_COLUMNS } from './table-columns.js';

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

  get isEmpty(): boolean {
    return [...this.tables.values()].every((rows) => rows.length === 0);
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
   * PostgreSQL only: writes the rows as ONE statement, outside any transaction of the caller's (a single
   * statement commits or fails as a whole; it commits on its own or with others in a commit group, see
   * src/db/postgres/commit-groups.ts), and only if `conditions` hold: every row of `existing` is there, and
   * the `claim` row (an Idempotency-Key's answer) was inserted rather than found taken. A whole idempotent
   * create is then one round trip, where BEGIN, the reference checks, the rows, the answer and COMMIT
   * were five. Nothing is written when a condition fails; the outcome says which.
   */
  async writeIf(writes: OneStatementWrites, conditions: AppendConditions): Promise<ConditionalOutcome> {
    return (await this.writeConditionally(writes, conditions)).outcome;
  }

  /**
   * writeIf for an optimistic write (`conditions.update`) that, when the row was found at another
   * version ('stale'), also answers the row as it stood when the statement began (undefined when it is
   * gone): the caller decides again from it without a read of its own, so a lost race costs no extra
   * round trip. The row is as TABLE_COLUMNS lists it, typed as a read of the table would be.
   */
  async writeIfAtVersion(writes: OneStatementWrites, conditions: AppendConditions & { update: NonNullable<AppendConditions['update']> }): Promise<{ outcome: ConditionalOutcome; current?: Row }> {
    return this.writeConditionally(writes, conditions, true);
  }

  private async writeConditionally(writes: OneStatementWrites, conditions: AppendConditions, readBack = false): Promise<{ outcome: ConditionalOutcome; current?: Row }> {
    const { shape, parameters } = conditionalStatement(conditions, this.tables, readBack, false);
    let text = conditionalTexts.get(shape);
    if (text === undefined) {
      text = conditionalStatement(conditions, this.tables, readBack, true).text;
      if (conditionalTexts.size < MAX_CONDITIONAL_SHAPES) conditionalTexts.set(shape, text);
    }
    this.tables.clear();
    let rows: Row[];
    try {
      ({ rows } = await writes.run<Row>(text, parameters));
    } catch (error) {
      // The claim's row was there (or committed by another request while this one waited on it): the
      // whole statement failed with it, so nothing of it was written.
      if (conditions.claim && isUniqueViolation(error) && (error as { table?: string }).table === conditions.claim.table) return { outcome: 'claim_taken' };
      throw error;
    }
    const { wo_allowed: allowed, wo_written: written, wo_stood: current } = rows[0] ?? {};
    if (Number(written) > 0) return { outcome: 'written' };
    if (Number(allowed) === 0) return { outcome: 'missing' };
    // With the gate open, only the version check can leave nothing written (a lost claim fails the statement).
    return { outcome: 'stale', ...(readBack && current != null ? { current: current as Row } : {}) };
  }
}

/**
 * The statement texts of writeConditionally by shape: a request writes one of a handful of shapes (a
 * create, each lifecycle action, a comment), and building its ~3 KB text, then hashing a new copy of it
 * to find its prepared statement (withNamedStatements), was a visible share of a create's CPU in the
 * API process (bench/analysis.md, session 20).
 * Past the bound a rare shape is built on each call.
 */
const conditionalTexts = new Map<string, string>();
const MAX_CONDITIONAL_SHAPES = 256;

/**
 * RowAppends.writeIf's one statement for `conditions` and `tables`: its parameters in order, the shape
 * that decides its text (tables, columns, which conditions), and, when `withText`, the text. One
 * function walks the conditions for both, so the parameters always follow the placeholders' order.
 */
function conditionalStatement(
  conditions: AppendConditions,
  tables: ReadonlyMap<TableName, Row[]>,
  readBack: boolean,
  withText: boolean,
): { shape: string; parameters: unknown[]; text: string } {
  const parameters: unknown[] = [];
  const shape: string[] = [readBack ? 'read-back' : 'no-read-back'];
  const bind = (value: unknown) => {
    parameters.push(value);
    return withText ? `$${parameters.length}` : '';
  };
  const ctes: string[] = [];
  const required: string[] = [];
  // Row locks are taken in the order they are listed: each lock's lookup waits for the one before
  // (an uncorrelated EXISTS is decided before its scan begins), so this statement locks rows in the
  // order a transaction of the same write would, and the two never wait on each other in a cycle.
  let lastLock = '';
  const lockAfterLast = (name: string, lookup: string, strength: 'SHARE' | 'UPDATE') => {
    ctes.push(`${name} AS (${lookup}${lastLock ? ` AND EXISTS (SELECT 1 FROM ${lastLock})` : ''} FOR ${strength})`);
    required.push(`EXISTS (SELECT 1 FROM ${name})`);
    lastLock = name;
  };
  if (conditions.update?.lockFirst) {
    const { table, id, orgId, version } = conditions.update;
    shape.push(`lock ${table} first`);
    const lookup = `SELECT 1 FROM ${quote(table)} WHERE "id" = ${bind(id)} AND ${inOrganizationSql(bind(orgId))} AND "version" = ${bind(version)}`;
    if (withText) lockAfterLast('locked_first', lookup, 'UPDATE');
  }
  (conditions.existing ?? []).forEach((reference, i) => {
    const atVersion = reference.version !== undefined;
    shape.push(`existing ${reference.table} ${reference.lockForShare ? 'shared' : ''} ${atVersion ? 'at version' : ''}`);
    const id = bind(reference.id);
    const orgId = bind(reference.orgId);
    const version = atVersion ? bind(reference.version) : '';
    if (!withText) return;
    const lookup = `SELECT 1 FROM ${quote(reference.table)} WHERE "id" = ${id} AND ${inOrganizationSql(orgId)}${atVersion ? ` AND "version" = ${version}` : ''}`;
    if (!reference.lockForShare) return void required.push(`EXISTS (${lookup})`);
    lockAfterLast(`locked_${i}`, lookup, 'SHARE');
  });
  for (const rows of conditions.counted ?? []) {
    const columns = Object.keys(rows.where);
    shape.push(`counted ${rows.table} ${columns.join(',')}`);
    const values = columns.map((column) => bind(rows.where[column]));
    const count = bind(rows.count);
    if (!withText) continue;
    const matching = columns.map((column, i) => `${quote(column)} = ${values[i]}`);
    required.push(`(SELECT count(*) FROM ${quote(rows.table)} WHERE ${matching.join(' AND ')}) = ${count}`);
  }
  const { decrement } = conditions;
  let decrementSet = '';
  let decrementWhere = '';
  if (decrement) {
    // Locked in the gate, with its conditions checked on the row's newest version (FOR UPDATE), so that
    // the decrement below, made only once the rest is written, cannot find the row otherwise.
    const keys = Object.keys(decrement.where);
    const extra = Object.keys(decrement.set ?? {});
    shape.push(`decrement ${decrement.table} ${decrement.column} where ${keys.join(',')} set ${extra.join(',')} ${decrement.flagBelow ? `flag ${decrement.flagBelow.column}` : ''}`);
    const matching = keys.map((key) => `${quote(key)} = ${bind(decrement.where[key])}`).join(' AND ');
    const amount = bind(decrement.amount);
    const column = quote(decrement.column);
    let flagCheck = '';
    if (decrement.flagBelow) {
      const threshold = bind(decrement.flagBelow.threshold);
      flagCheck = ` AND ${quote(decrement.flagBelow.column)} = (CASE WHEN ${threshold}::bigint IS NOT NULL AND ${column} - ${amount}::bigint < ${threshold}::bigint THEN 1 ELSE 0 END)`;
    }
    const assignments = extra.map((key) => `, ${quote(key)} = ${bind(decrement.set![key])}`).join('');
    if (withText) {
      lockAfterLast('to_decrement', `SELECT 1 FROM ${quote(decrement.table)} WHERE ${matching} AND ${column} >= ${amount}::bigint${flagCheck}`, 'UPDATE');
      decrementSet = `${column} = ${column} - ${amount}::bigint${assignments}`;
      decrementWhere = matching;
    }
  }
  const hasRequired = (conditions.existing?.length ?? 0) + (conditions.counted?.length ?? 0) + (decrement ? 1 : 0) > 0;
  if (withText) ctes.push(`gate AS (SELECT 1 AS ok${required.length ? ` WHERE ${required.join(' AND ')}` : ''})`);
  const insertFrom = (table: string, row: Row, source: string) => {
    const columns = Object.keys(row);
    shape.push(`insert ${table} ${columns.join(',')} from ${source}`);
    const values = columns.map((column) => bind(row[column]));
    return withText ? `INSERT INTO ${quote(table)} (${columns.map(quote).join(', ')}) SELECT ${values.join(', ')} FROM ${source}` : '';
  };
  let source = 'gate';
  let asItStood = '';
  if (conditions.update) {
    const { table, id, orgId, version, set, rowStamp } = conditions.update;
    const columns = Object.keys(set);
    shape.push(`update ${table} ${columns.join(',')}${rowStamp !== undefined ? ' stamped' : ''}`);
    const values = columns.map((column) => bind(set[column]));
    const idParameter = bind(id);
    const orgParameter = bind(orgId);
    const versionParameter = bind(version);
    const stampParameter = rowStamp !== undefined ? bind(rowStamp) : '';
    source = 'updated';
    if (withText) {
      const assignments = columns.map((column, i) => `${quote(column)} = ${values[i]}`);
      const guarded = hasRequired ? ' AND EXISTS (SELECT 1 FROM gate)' : '';
      // Checked again on the row's newest version when the UPDATE waited for another writer of it
      // (READ COMMITTED), which a condition read in the statement's snapshot would not be.
      const stamped = rowStamp !== undefined ? ` AND "xmin" = ${stampParameter}::xid` : '';
      ctes.push(
        `updated AS (UPDATE ${quote(table)} SET ${assignments.join(', ')} WHERE "id" = ${idParameter} AND ${inOrganizationSql(orgParameter)} AND "version" = ${versionParameter}${stamped}${guarded} RETURNING 1 AS ok)`,
      );
      // The main query sees the statement's snapshot, not what its UPDATE wrote: the row as it stood.
      // The uncorrelated NOT EXISTS is checked once, so a write that succeeded reads nothing more.
      // Columns by name, not `*`: the statement stays a prepared one (see withNamedStatements).
      // Answered as ONE json column, null unless the write failed: the driver (pg ≥ 8.21) pays for
      // each column of every result it describes, on every execution, written or not (bench/analysis.md,
      // session 24), and its one user, `records`, holds text and integers, which JSON carries as the
      // driver would.
      if (readBack) {
        const listed = (TABLE_COLUMNS as Partial<Record<string, readonly string[]>>)[table];
        if (!listed) throw new Error(`reading back ${table} needs its columns in TABLE_COLUMNS (src/db/table-columns.ts)`);
        const standing = listed.map(quote);
        asItStood = ` LEFT JOIN LATERAL (SELECT ${standing.join(', ')} FROM ${quote(table)} WHERE "id" = ${idParameter} AND ${inOrganizationSql(orgParameter)} AND NOT EXISTS (SELECT 1 FROM updated)) AS stood ON true`;
      }
    }
  }
  if (decrement) {
    if (withText) ctes.push(`decremented AS (UPDATE ${quote(decrement.table)} SET ${decrementSet} WHERE ${decrementWhere} AND EXISTS (SELECT 1 FROM ${source}) RETURNING 1 AS ok)`);
    source = 'decremented';
  }
  if (conditions.claim) {
    const { table, row } = conditions.claim;
    const insert = insertFrom(table, row, source);
    if (withText) ctes.push(`claimed AS (${insert} RETURNING 1 AS ok)`);
    source = 'claimed';
  }
  let n = 0;
  for (const [table, rows] of tables) {
    // Sub-statements run in no given order; a table's rows must take their sequence numbers (events
    // in the outbox) in the order added, so each of its inserts reads the row of the one before.
    let previous = source;
    for (const row of rows) {
      const name = `appended_${n++}`;
      const insert = insertFrom(table, row, previous);
      if (withText) ctes.push(`${name} AS (${insert}${rows.length > 1 ? ' RETURNING 1 AS ok' : ''})`);
      previous = name;
    }
  }
  if (!withText) return { shape: shape.join('\n'), parameters, text: '' };
  const outcomes = `(SELECT count(*) FROM gate) AS wo_allowed, (SELECT count(*) FROM ${source}) AS wo_written`;
  const text = `WITH ${ctes.join(', ')} SELECT ${asItStood ? `${outcomes}, to_json(stood) AS wo_stood FROM (SELECT 1) AS one${asItStood}` : outcomes}`;
  return { shape: shape.join('\n'), parameters, text };
}

/**
 * Where RowAppends.writeIf's one statement runs and commits, outside any transaction: PostgreSQL's
 * commit groups (`PostgresDatabase.oneStatementWrites`, src/db/postgres/commit-groups.ts).
 */
export interface OneStatementWrites {
  run<R extends Row>(text: string, values: unknown[]): Promise<{ rows: R[] }>;
}

/** What must hold for RowAppends.writeIf to write its rows. */
export interface AppendConditions {
  /**
   * Rows of an organization that must exist. `lockForShare` keeps one from being deleted until the
   * statement commits: for references no foreign key protects.
   */
  existing?: { table: TableName; id: string; orgId: string; lockForShare?: boolean; version?: number }[];
  /**
   * Rows of `table` matching `where` that must number exactly `count`: a decision made from rows read
   * before the statement (a completion's history, which its proof carries) stands only if none was
   * added since. Rows that come without a new version of what they belong to need it (comments and
   * attachments add history entries and leave the work order's version as it is).
   */
  counted?: { table: TableName; where: Record<string, unknown>; count: number }[];
  /**
   * A versioned row to change, only if it is still at `version` (an optimistic write): nothing is
   * written when another write changed it meanwhile ('stale'). With `lockFirst` it is locked before
   * any other row the statement locks (the order its transactional twin takes them in); found at
   * another version, it then closes the gate ('missing'). With `rowStamp` (the row's `xmin` as read),
   * it must also be the very row version read: a write that leaves `version` as it is (an answer to a
   * checklist, src/checklists/repository.ts) makes it 'stale' too. Not with `lockFirst`.
   */
  update?: { table: TableName; id: string; orgId: string; version: number; set: Row; lockFirst?: boolean; rowStamp?: string };
  /**
   * A row whose `column` must hold at least `amount`, taken from it once everything else is written
   * (stock issued). With `flagBelow`, its `flagBelow.column` must already say whether what is left is
   * below `threshold` (1) or not (0): a write that would move the row across the threshold, which
   * announces itself, is not made here (the gate stays closed: 'missing').
   */
  decrement?: { table: TableName; where: Row; column: string; amount: number | string; set?: Row; flagBelow?: { column: string; threshold: number | string | null } };
  /**
   * A row that must be inserted (an Idempotency-Key's answer), not found already there, for anything to
   * be written: the statement fails as a whole on its unique key ('claim_taken').
   */
  claim?: { table: TableName; row: Row };
}

export type ConditionalOutcome = 'written' | 'missing' | 'stale' | 'claim_taken';

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
