import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../db/database.js';
import { preparedListsQuery, preparedQuery } from '../db/prepared.js';
import { insertRows } from '../db/insert-rows.js';
import type { ProofStatementsTable, TlogCheckpointsTable, TlogLeavesTable, TlogNodesTable, TlogTimestampAuthoritiesTable, TlogWitnessesTable } from './tables.js';
import { IN_ORGANIZATION } from '../db/organization-check.js';

// The statuses the sequencer's scans filter on, written into the SQL: each has a partial index, which
// SQLite can only match to a bound value by reading it while planning, and a statement planned on a
// bound value is prepared again every time it runs, which made each probe several times dearer.
const UNSIGNED = sql.lit('unsigned' as const);
const PENDING = sql.lit('pending' as const);

// A completion appends its statement with its other rows (ProofService.recordCompletion); this
// inserts one on its own (the log's tests seed statements with it).
const insertStatementQuery = preparedQuery((db, row: ProofStatementsTable) => db.insertInto('proof_statements').values(row));

export async function insertStatement(db: Executor, row: ProofStatementsTable): Promise<void> {
  await insertStatementQuery(db, row);
}

/** What serving a proof reads of its statement: not the statement's JSON (kilobytes), which only the sequencer signs. */
const SERVED_STATEMENT_COLUMNS = ['id', 'record_id', 'jws', 'status', 'leaf_index', 'tree_size', 'created_at'] as const;
export type ServedStatement = Pick<ProofStatementsTable, (typeof SERVED_STATEMENT_COLUMNS)[number]>;

/** What a bundle takes from the first published checkpoint that includes its statement. */
const BUNDLE_CHECKPOINT_COLUMNS = ['tree_size', 'note', 'cosignatures', 'timestamp_token'] as const;
export type BundleCheckpoint = Pick<TlogCheckpointsTable, (typeof BUNDLE_CHECKPOINT_COLUMNS)[number]>;

/** A statement as served, with the checkpoint its bundle names: none while it is unsealed or no checkpoint that includes it is published yet. */
export interface ServedProof {
  statement: ServedStatement;
  checkpoint?: BundleCheckpoint;
}

/**
 * The first checkpoint of at least `sealedIn` leaves that was published, from its partial index. With a
 * witness policy the first witnessed one, else (fail-open: flagged unwitnessed) the first published.
 */
function firstPublishedSize(sealedIn: RawBuilder<unknown>, witnessed: boolean) {
  const first = (publication: RawBuilder<unknown>) =>
    sql`(SELECT "first"."tree_size" FROM "tlog_checkpoints" AS "first" WHERE "first"."tree_size" >= ${sealedIn} AND "first"."publication" ${publication} ORDER BY "first"."tree_size" LIMIT 1)`;
  const any = first(sql`IS NOT NULL`);
  return witnessed ? sql`coalesce(${first(sql`= 'witnessed'`)}, ${any})` : any;
}

const SERVED_PROOF_COLUMNS = [
  ...SERVED_STATEMENT_COLUMNS.map((column) => sql.ref(`statement.${column}`).as(column)),
  ...BUNDLE_CHECKPOINT_COLUMNS.map((column) => sql.ref(`checkpoint.${column}`).as(`checkpoint_${column}`)),
];

type ServedProofRow = { [K in keyof ServedStatement]: ServedStatement[K] | null } & { [K in keyof BundleCheckpoint as `checkpoint_${K}`]: BundleCheckpoint[K] | null };

// GET /proofs/{id} and GET /records/{id}/proof read these on every request, the statement and its
// checkpoint in one statement (one round trip on PostgreSQL): compiled once per kind of log (see preparedQuery).
function servedProofQuery(witnessed: boolean) {
  return preparedQuery((db, p: { orgId: string; id: string }) =>
    db
      .selectFrom('proof_statements as statement')
      .leftJoin('tlog_checkpoints as checkpoint', (join) => join.on(sql<boolean>`"checkpoint"."tree_size" = ${firstPublishedSize(sql.ref('statement.tree_size'), witnessed)}`))
      .select(SERVED_PROOF_COLUMNS)
      .where('statement.id', '=', p.id)
      .where('statement.org_id', IN_ORGANIZATION, p.orgId),
  );
}

// The work order and its latest statement: no row when the work order is not the organization's,
// NULL columns when it has no statement.
function servedProofOfRecordQuery(witnessed: boolean) {
  return preparedQuery((db, p: { orgId: string; recordId: string }) => {
    const latest = db.selectFrom('proof_statements').select(SERVED_STATEMENT_COLUMNS).where('org_id', '=', p.orgId).where('record_id', '=', p.recordId).orderBy('id', 'desc').limit(1);
    return db
      .selectFrom('records')
      .leftJoin(latest.as('statement'), (join) => join.onTrue())
      .leftJoin('tlog_checkpoints as checkpoint', (join) => join.on(sql<boolean>`"checkpoint"."tree_size" = ${firstPublishedSize(sql.ref('statement.tree_size'), witnessed)}`))
      .select(SERVED_PROOF_COLUMNS)
      .where('records.id', '=', p.recordId)
      .where('records.org_id', IN_ORGANIZATION, p.orgId);
  });
}

const servedProofQueries = { witnessed: servedProofQuery(true), unwitnessed: servedProofQuery(false) };
const servedProofOfRecordQueries = { witnessed: servedProofOfRecordQuery(true), unwitnessed: servedProofOfRecordQuery(false) };

// Field by field, not by rest and spread: V8 copies those through a generic builtin on every proof served.
function servedProof(row: ServedProofRow): ServedProof {
  const statement = { id: row.id, record_id: row.record_id, jws: row.jws, status: row.status, leaf_index: row.leaf_index, tree_size: row.tree_size, created_at: row.created_at } as ServedStatement;
  if (row.checkpoint_tree_size === null) return { statement };
  const checkpoint = { tree_size: row.checkpoint_tree_size, note: row.checkpoint_note!, cosignatures: row.checkpoint_cosignatures!, timestamp_token: row.checkpoint_timestamp_token };
  return { statement, checkpoint };
}

/** A statement of the organization by id, with its bundle's checkpoint (`witnessed`: the log has a witness policy). */
export async function findServedProof(db: Executor, orgId: string, id: string, witnessed: boolean): Promise<ServedProof | undefined> {
  const [row] = (await servedProofQueries[witnessed ? 'witnessed' : 'unwitnessed'](db, { orgId, id })).rows as ServedProofRow[];
  return row && servedProof(row);
}

/** A work order's latest statement with its bundle's checkpoint: `record: false` when the organization has no such work order. */
export async function servedProofOfRecord(db: Executor, orgId: string, recordId: string, witnessed: boolean): Promise<{ record: boolean; proof?: ServedProof }> {
  const [row] = (await servedProofOfRecordQueries[witnessed ? 'witnessed' : 'unwitnessed'](db, { orgId, recordId })).rows as ServedProofRow[];
  if (!row) return { record: false };
  return row.id === null ? { record: true } : { record: true, proof: servedProof(row) };
}

/** Only the id of the latest statement (what a new statement supersedes): its JWS, kilobytes, is not read. */
const latestStatementIdQuery = preparedQuery((db, p: { orgId: string; recordId: string }) =>
  db.selectFrom('proof_statements').select('id').where('org_id', '=', p.orgId).where('record_id', '=', p.recordId).orderBy('id', 'desc').limit(1),
);

export async function latestStatementIdOfRecord(db: Executor, orgId: string, recordId: string): Promise<string | undefined> {
  return (await latestStatementIdQuery(db, { orgId, recordId })).rows[0]?.id;
}

/** Statements signed at completion by a release before 0011, waiting to be sealed (oldest first). */
export async function pendingStatements(db: Executor, limit: number): Promise<Pick<ProofStatementsTable, 'id' | 'org_id' | 'record_id' | 'jws' | 'statement_digest'>[]> {
  return db
    .selectFrom('proof_statements')
    .select(['id', 'org_id', 'record_id', 'jws', 'statement_digest'])
    .where('status', '=', PENDING)
    .orderBy('id', 'asc')
    .limit(limit)
    .execute();
}

export interface UnsignedStatementRow {
  id: string;
  org_id: string;
  record_id: string;
  statement_json: string;
}

/**
 * Statements waiting to be signed and sealed, oldest first, from the partial index: all of them, or
 * those with ids after `afterId` (where the sequencer's signing ahead stopped last time).
 */
export async function unsignedStatements(db: Executor, limit: number, afterId = ''): Promise<UnsignedStatementRow[]> {
  const rows = await db
    .selectFrom('proof_statements')
    .select(['id', 'org_id', 'record_id', 'statement_json'])
    .where('status', '=', UNSIGNED)
    .where('id', '>', afterId)
    .orderBy('id', 'asc')
    .limit(limit)
    .execute();
  return rows.filter((row): row is UnsignedStatementRow => row.statement_json !== null);
}

export type UnsignedStatementKey = Omit<UnsignedStatementRow, 'statement_json'>;

/** Unsigned statements without their JSON, oldest first. */
export async function unsignedStatementKeys(db: Executor, limit: number): Promise<UnsignedStatementKey[]> {
  return db.selectFrom('proof_statements').select(['id', 'org_id', 'record_id']).where('status', '=', UNSIGNED).orderBy('id', 'asc').limit(limit).execute();
}

/** Whether any statement waits to be sealed: a probe of each partial index, nothing read. */
export async function hasStatementsToSeal(db: Executor): Promise<boolean> {
  return (await firstUnsignedStatementQuery(db, {})).rows.length > 0 || (await firstPendingStatementQuery(db, {})).rows.length > 0;
}

const firstUnsignedStatementQuery = preparedQuery((db) => db.selectFrom('proof_statements').select('id').where('status', '=', UNSIGNED).orderBy('id', 'asc').limit(1));
const firstPendingStatementQuery = preparedQuery((db) => db.selectFrom('proof_statements').select('id').where('status', '=', PENDING).orderBy('id', 'asc').limit(1));

export interface SealedStatement {
  id: string;
  /** The status it was read in: only a statement still in it is sealed. */
  was: 'unsigned' | 'pending';
  jws: string;
  digest: string;
  leafIndex: number;
}

const markSealedQuery = preparedQuery((db, p: SealedStatement & { treeSize: number; sealedAt: string }) =>
  db
    .updateTable('proof_statements')
    .set({ status: 'sealed', jws: p.jws, statement_digest: p.digest, statement_json: null, leaf_index: p.leafIndex, tree_size: p.treeSize, sealed_at: p.sealedAt })
    .where('id', '=', p.id)
    .where('status', '=', p.was),
);

/**
 * SQLite: marks statements sealed under the checkpoint of `treeSize`, with their signatures and leaf
 * indexes. One prepared statement per row: each row gets its own JWS and leaf index, and on SQLite a
 * prepared UPDATE by primary key is cheaper than any multi-row form that carries per-row values.
 */
export async function markSealedRowByRow(db: Executor, statements: SealedStatement[], treeSize: number, sealedAt: string): Promise<void> {
  for (const statement of statements) await markSealedQuery(db, { ...statement, treeSize, sealedAt });
}

/**
 * PostgreSQL: the same, the batch in one statement, its per-row values as arrays; a statement per row
 * was a round trip each, up to MAX_BATCH of them inside the sequencer's transaction.
 */
export async function markSealedInOneStatement(db: Executor, statements: SealedStatement[], treeSize: number, sealedAt: string): Promise<void> {
  const column = <K extends keyof SealedStatement>(key: K) => statements.map((statement) => statement[key]);
  await sql`
    UPDATE proof_statements AS s
    SET status = 'sealed', jws = v.jws, statement_digest = v.digest, statement_json = NULL,
        leaf_index = v.leaf_index, tree_size = ${treeSize}, sealed_at = ${sealedAt}
    FROM unnest(${column('id')}::text[], ${column('was')}::text[], ${column('jws')}::text[], ${column('digest')}::text[], ${column('leafIndex')}::bigint[])
      AS v (id, was, jws, digest, leaf_index)
    WHERE s.id = v.id AND s.status = v.was`.execute(db);
}

export async function latestCheckpoint(db: Executor): Promise<TlogCheckpointsTable | undefined> {
  return db.selectFrom('tlog_checkpoints').selectAll().orderBy('tree_size', 'desc').limit(1).executeTakeFirst();
}

export async function checkpointAt(db: Executor, treeSize: number): Promise<TlogCheckpointsTable | undefined> {
  return db.selectFrom('tlog_checkpoints').selectAll().where('tree_size', '=', treeSize).executeTakeFirst();
}

/** The latest checkpoint published (witnessed, flagged unwitnessed, or log-signed without a policy). */
export async function latestPublishedCheckpoint(db: Executor): Promise<TlogCheckpointsTable | undefined> {
  return db.selectFrom('tlog_checkpoints').selectAll().where('publication', 'is not', null).orderBy('tree_size', 'desc').limit(1).executeTakeFirst();
}

/** The first checkpoint of at least `treeSize` leaves, published or not. */
export async function firstCheckpointFrom(db: Executor, treeSize: number): Promise<TlogCheckpointsTable | undefined> {
  return db.selectFrom('tlog_checkpoints').selectAll().where('tree_size', '>=', treeSize).orderBy('tree_size', 'asc').limit(1).executeTakeFirst();
}

export async function publishedCheckpointAt(db: Executor, treeSize: number): Promise<TlogCheckpointsTable | undefined> {
  return db.selectFrom('tlog_checkpoints').selectAll().where('tree_size', '=', treeSize).where('publication', 'is not', null).executeTakeFirst();
}

/** Marks an unpublished checkpoint published; false when it already was (by another process). */
export async function markPublished(db: Executor, treeSize: number, publication: 'witnessed' | 'unwitnessed', at: string): Promise<boolean> {
  const result = await db.updateTable('tlog_checkpoints').set({ publication, published_at: at }).where('tree_size', '=', treeSize).where('publication', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Appends witnesses' cosignature lines to a checkpoint (concatenated in SQL: concurrent appends both stay). */
export async function appendCosignatures(db: Executor, treeSize: number, lines: string): Promise<void> {
  await db
    .updateTable('tlog_checkpoints')
    .set({ cosignatures: sql<string>`cosignatures || ${lines}` })
    .where('tree_size', '=', treeSize)
    .execute();
}

/** The statements of leaves [from, to), with what their delivery events name. */
export async function statementsOfLeaves(db: Executor, from: number, to: number): Promise<Array<{ leaf_index: number; id: string; org_id: string; record_id: string }>> {
  return db
    .selectFrom('tlog_leaves as l')
    .innerJoin('proof_statements as s', 's.id', 'l.proof_id')
    .select(['l.leaf_index', 's.id', 's.org_id', 's.record_id'])
    .where('l.leaf_index', '>=', from)
    .where('l.leaf_index', '<', to)
    .orderBy('l.leaf_index', 'asc')
    .execute();
}

const leafHashRangeQuery = preparedQuery((db, p: { first: number; end: number }) =>
  db.selectFrom('tlog_leaves').select(['leaf_hash']).where('leaf_index', '>=', p.first).where('leaf_index', '<', p.end).orderBy('leaf_index', 'asc'),
);
const nodeHashRangeQuery = preparedQuery((db, p: { level: number; first: number; end: number }) =>
  db.selectFrom('tlog_nodes').select(['hash']).where('level', '=', p.level).where('node_index', '>=', p.first).where('node_index', '<', p.end).orderBy('node_index', 'asc'),
);

/** Hex hashes at one Merkle level, indexes [first, first + count), in order: a tile's content (level 0: leaf hashes). */
export async function readLevelRange(db: Executor, level: number, first: number, count: number): Promise<string[]> {
  if (level === 0) return (await leafHashRangeQuery(db, { first, end: first + count })).rows.map((row) => row.leaf_hash);
  return (await nodeHashRangeQuery(db, { level, first, end: first + count })).rows.map((row) => row.hash);
}

export async function listWitnessStates(db: Executor): Promise<TlogWitnessesTable[]> {
  return db.selectFrom('tlog_witnesses').selectAll().orderBy('name', 'asc').execute();
}

export async function saveWitnessState(db: Executor, row: TlogWitnessesTable): Promise<void> {
  await db
    .insertInto('tlog_witnesses')
    .values(row)
    .onConflict((oc) => oc.column('vkey').doUpdateSet({ name: row.name, cosigned_size: row.cosigned_size, last_attempt_at: row.last_attempt_at, last_success_at: row.last_success_at, failures: row.failures, last_error: row.last_error }))
    .execute();
}

/** Keeps a TSA's token on the checkpoint of `treeSize`, unless it has one already. */
export async function saveTimestampToken(db: Executor, treeSize: number, token: string): Promise<void> {
  await db.updateTable('tlog_checkpoints').set({ timestamp_token: token }).where('tree_size', '=', treeSize).where('timestamp_token', 'is', null).execute();
}

/** Published checkpoints from `treeSize` on that have no TSA token yet, oldest first. */
export async function publishedWithoutTimestamp(db: Executor, treeSize: number, limit: number): Promise<TlogCheckpointsTable[]> {
  return db
    .selectFrom('tlog_checkpoints')
    .selectAll()
    .where('tree_size', '>=', treeSize)
    .where('publication', 'is not', null)
    .where('timestamp_token', 'is', null)
    .orderBy('tree_size', 'asc')
    .limit(limit)
    .execute();
}

export async function findTimestampAuthorityState(db: Executor, url: string): Promise<TlogTimestampAuthoritiesTable | undefined> {
  return db.selectFrom('tlog_timestamp_authorities').selectAll().where('url', '=', url).executeTakeFirst();
}

export async function saveTimestampAuthorityState(db: Executor, row: TlogTimestampAuthoritiesTable): Promise<void> {
  const { timestamped_size, last_attempt_at, last_success_at, failures, last_error } = row;
  await db
    .insertInto('tlog_timestamp_authorities')
    .values(row)
    .onConflict((oc) => oc.column('url').doUpdateSet({ timestamped_size, last_attempt_at, last_success_at, failures, last_error }))
    .execute();
}

export async function listCheckpoints(db: Executor): Promise<TlogCheckpointsTable[]> {
  return db.selectFrom('tlog_checkpoints').selectAll().orderBy('tree_size', 'asc').execute();
}

export async function insertCheckpoint(db: Executor, row: TlogCheckpointsTable): Promise<void> {
  await db.insertInto('tlog_checkpoints').values(row).execute();
}

export async function insertLeaves(db: Executor, rows: TlogLeavesTable[]): Promise<void> {
  await insertRows(db, 'tlog_leaves', rows);
}

export async function insertNodes(db: Executor, rows: TlogNodesTable[]): Promise<void> {
  await insertRows(db, 'tlog_nodes', rows);
}

/** Hex hashes of perfect subtrees by `level:index` (level 0 = leaf hashes), in one statement. */
export async function readSubtrees(db: Executor, keys: Array<{ level: number; index: number }>): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  if (keys.length === 0) return found;
  const leafIndexes: number[] = [];
  const levels: number[] = [];
  const nodeIndexes: number[] = [];
  for (const key of keys) {
    if (key.level === 0) leafIndexes.push(key.index);
    else {
      levels.push(key.level);
      nodeIndexes.push(key.index);
    }
  }
  const { rows } = await subtreeHashesQuery(db, {}, [leafIndexes, levels, nodeIndexes]);
  for (const row of rows) found.set(`${row.level}:${Number(row.node_index)}`, row.hash);
  return found;
}

// An inclusion proof reads about log2(tree size) hashes on every proof served: the leaves' and the
// nodes' in one statement (one round trip on PostgreSQL), compiled once per pair of list lengths.
// The nodes' (level, index) pairs come as two lists of one length, which stay aligned when padded.
const subtreeHashesQuery = preparedListsQuery((db, _p: object, [leafIndexes, levels, nodeIndexes]: [number[], number[], number[]]) => {
  const leaves = db.selectFrom('tlog_leaves').select([sql.lit(0).as('level'), 'leaf_index as node_index', 'leaf_hash as hash']).where('leaf_index', 'in', leafIndexes);
  const nodes = db
    .selectFrom('tlog_nodes')
    .select(['level', 'node_index', 'hash'])
    .where((eb) => eb.or(levels.map((level, i) => eb.and([eb('level', '=', level), eb('node_index', '=', nodeIndexes[i]!)]))));
  if (levels.length === 0) return leaves;
  if (leafIndexes.length === 0) return nodes;
  return leaves.unionAll(nodes);
});
