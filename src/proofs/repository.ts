import type { Executor } from '../db/database.js';
import { preparedQuery } from '../db/prepared.js';
import type { ProofStatementsTable, TlogCheckpointsTable, TlogLeavesTable, TlogNodesTable } from '../db/tables.js';

// Rows per multi-row INSERT: far below SQLite's and PostgreSQL's bound-parameter limits.
const INSERT_CHUNK = 500;

// Every completion writes one statement and reads the one it supersedes: both compiled once.
const insertStatementQuery = preparedQuery((db, row: ProofStatementsTable) => db.insertInto('proof_statements').values(row));

export async function insertStatement(db: Executor, row: ProofStatementsTable): Promise<void> {
  await insertStatementQuery(db, row);
}

export async function findStatement(db: Executor, orgId: string, id: string): Promise<ProofStatementsTable | undefined> {
  return db.selectFrom('proof_statements').selectAll().where('id', '=', id).where('org_id', '=', orgId).executeTakeFirst();
}

export async function latestStatementOfRecord(db: Executor, orgId: string, recordId: string): Promise<ProofStatementsTable | undefined> {
  return db
    .selectFrom('proof_statements')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('record_id', '=', recordId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Only the id of the latest statement (what a new statement supersedes): its JWS, kilobytes, is not read. */
const latestStatementIdQuery = preparedQuery((db, p: { orgId: string; recordId: string }) =>
  db.selectFrom('proof_statements').select('id').where('org_id', '=', p.orgId).where('record_id', '=', p.recordId).orderBy('id', 'desc').limit(1),
);

export async function latestStatementIdOfRecord(db: Executor, orgId: string, recordId: string): Promise<string | undefined> {
  return (await latestStatementIdQuery(db, { orgId, recordId })).rows[0]?.id;
}

export async function pendingStatements(db: Executor, limit: number): Promise<Pick<ProofStatementsTable, 'id' | 'org_id' | 'record_id' | 'jws'>[]> {
  return db
    .selectFrom('proof_statements')
    .select(['id', 'org_id', 'record_id', 'jws'])
    .where('status', '=', 'pending')
    .orderBy('id', 'asc')
    .limit(limit)
    .execute();
}

/** Whether any statement waits to be sealed: one probe of the partial index on pending statements. */
export async function hasPendingStatements(db: Executor): Promise<boolean> {
  return (await firstPendingStatementQuery(db, {})).rows.length > 0;
}

const firstPendingStatementQuery = preparedQuery((db) => db.selectFrom('proof_statements').select('id').where('status', '=', 'pending').orderBy('id', 'asc').limit(1));

/** Marks statements sealed under the checkpoint of `treeSize`, taking each leaf index from tlog_leaves (one statement per chunk). */
export async function markSealed(db: Executor, ids: string[], treeSize: number, sealedAt: string): Promise<void> {
  for (let i = 0; i < ids.length; i += INSERT_CHUNK) {
    await db
      .updateTable('proof_statements')
      .set((eb) => ({
        status: 'sealed',
        tree_size: treeSize,
        sealed_at: sealedAt,
        leaf_index: eb.selectFrom('tlog_leaves').select('tlog_leaves.leaf_index').whereRef('tlog_leaves.proof_id', '=', 'proof_statements.id'),
      }))
      .where('id', 'in', ids.slice(i, i + INSERT_CHUNK))
      .where('status', '=', 'pending')
      .execute();
  }
}

export async function latestCheckpoint(db: Executor): Promise<TlogCheckpointsTable | undefined> {
  return db.selectFrom('tlog_checkpoints').selectAll().orderBy('tree_size', 'desc').limit(1).executeTakeFirst();
}

export async function checkpointAt(db: Executor, treeSize: number): Promise<TlogCheckpointsTable | undefined> {
  return db.selectFrom('tlog_checkpoints').selectAll().where('tree_size', '=', treeSize).executeTakeFirst();
}

export async function listCheckpoints(db: Executor): Promise<TlogCheckpointsTable[]> {
  return db.selectFrom('tlog_checkpoints').selectAll().orderBy('tree_size', 'asc').execute();
}

export async function insertCheckpoint(db: Executor, row: TlogCheckpointsTable): Promise<void> {
  await db.insertInto('tlog_checkpoints').values(row).execute();
}

async function insertChunked<T extends 'tlog_leaves' | 'tlog_nodes'>(db: Executor, table: T, rows: (T extends 'tlog_leaves' ? TlogLeavesTable : TlogNodesTable)[]): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    await db.insertInto(table).values(rows.slice(i, i + INSERT_CHUNK) as never).execute();
  }
}

export async function insertLeaves(db: Executor, rows: TlogLeavesTable[]): Promise<void> {
  await insertChunked(db, 'tlog_leaves', rows);
}

export async function insertNodes(db: Executor, rows: TlogNodesTable[]): Promise<void> {
  await insertChunked(db, 'tlog_nodes', rows);
}

/** Hex hashes of perfect subtrees by `level:index` (level 0 = leaf hashes), in at most two queries. */
export async function readSubtrees(db: Executor, keys: Array<{ level: number; index: number }>): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const leafIndexes = keys.filter((k) => k.level === 0).map((k) => k.index);
  const nodes = keys.filter((k) => k.level > 0);
  if (leafIndexes.length > 0) {
    const rows = await db.selectFrom('tlog_leaves').select(['leaf_index', 'leaf_hash']).where('leaf_index', 'in', leafIndexes).execute();
    for (const row of rows) found.set(`0:${Number(row.leaf_index)}`, row.leaf_hash);
  }
  if (nodes.length > 0) {
    const rows = await db
      .selectFrom('tlog_nodes')
      .select(['level', 'node_index', 'hash'])
      .where((eb) => eb.or(nodes.map((k) => eb.and([eb('level', '=', k.level), eb('node_index', '=', k.index)]))))
      .execute();
    for (const row of rows) found.set(`${row.level}:${Number(row.node_index)}`, row.hash);
  }
  return found;
}
