// The reads' yardstick (issue 51, bench `list`): GET /api/v1/records, GET /api/v1/records/{id},
// GET /api/v1/events?after= and GET /api/v1/records/{id}/proof done the plainest way on the service's own database, beside the service in
// the same run. Per request exactly the work the contract promises: the Bearer key looked up by its
// SHA-256 (revocation, expiry and the route's scope checked), the page (ORDER BY created_at DESC, id DESC
// with LIMIT and OFFSET on the service's index; the feed in its positions' order after `after`), its
// exact total (the service's maintained counts; the feed's count after `after`) in the same snapshot,
// and the same JSON: JSON.stringify of rows mapped by the service's own toWorkOrder, and each event as
// the feed writes it (publishedPayloadJson); a proof bundle from its statement, the first published
// checkpoint that includes it (as a service without a witness policy serves) and the inclusion proof
// computed by the service's own Merkle code from the stored hashes, JSON.stringify'd. No Kysely, no hooks,
// no metrics, no access log, no Link header, no ETag.
//
// REFERENCE_VERIFIER_KEY is the log's public verifier key (GET /api/v1/transparency/verifier-key): its
// name and key id go into each bundle, as the service's configured log key does.
//
// REFERENCE_SQLITE_PATH names the service's SQLite file (opened read-only: WAL lets it read beside the
// service), or REFERENCE_DATABASE_URL its PostgreSQL database (a pg pool of 10, as the service's).
import { createHash } from 'node:crypto';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { serveUntilStopped } from './lib/serve-until-stopped.js';
import { publishedPayloadJson } from '../src/events/outbox.js';
import { toWorkOrder } from '../src/records/repository.js';
import { parseVerifierKey } from '../src/proofs/checkpoint.js';
import { toHex } from '../src/proofs/encoding.js';
import { sha256Sync } from '../src/proofs/keys.js';
import { inclusionProof, recordSubtreeReads } from '../src/proofs/merkle.js';
import { cosignedNote } from '../src/proofs/transparency-log.js';
import { BUNDLE_MEDIA_TYPE, BUNDLE_VERSION } from '../src/proofs/verify.js';
import type { RecordsTable } from '../src/records/tables.js';

interface KeyRow {
  org_id: string;
  scopes: string;
  revoked_at: string | null;
  expires_at: string | null;
}

interface EventRow {
  position: number | string;
  id: string;
  type: string;
  payload: string;
  created_at: string;
}

interface StatementRow {
  id: string;
  record_id: string;
  jws: string;
  status: string;
  leaf_index: number | string | null;
  tree_size: number | string | null;
}

interface CheckpointRow {
  tree_size: number | string;
  note: string;
  cosignatures: string;
  timestamp_token: string | null;
}

/** What a database must answer: a key by hash, a page with its total (one snapshot), one work order, a page of the feed with its total, a proof's parts. */
interface Reads {
  key(hash: string): Promise<KeyRow | undefined>;
  page(orgId: string, status: string | undefined, limit: number, offset: number): Promise<{ rows: RecordsTable[]; total: number }>;
  one(orgId: string, id: string): Promise<RecordsTable | undefined>;
  feed(orgId: string, after: number, limit: number, offset: number): Promise<{ rows: EventRow[]; total: number }>;
  /** Whether the work order exists, and its latest statement. */
  latestStatement(orgId: string, recordId: string): Promise<{ exists: boolean; statement?: StatementRow }>;
  firstPublishedCheckpoint(treeSize: number): Promise<CheckpointRow | undefined>;
  /** Hex hashes by `level:index` (level 0: leaves). */
  subtrees(keys: { level: number; index: number }[]): Promise<Map<string, string>>;
  close(): void;
}

function sqliteReads(file: string): Reads {
  const db = new SqliteDatabase(file, { readonly: true });
  db.pragma('query_only = ON');
  const key = db.prepare<[string], KeyRow>('SELECT org_id, scopes, revoked_at, expires_at FROM api_keys WHERE key_hash = ?');
  const pageAll = db.prepare<[string, number, number], RecordsTable>('SELECT * FROM records WHERE org_id = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?');
  const pageStatus = db.prepare<[string, string, number, number], RecordsTable>('SELECT * FROM records WHERE org_id = ? AND status = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?');
  const totalAll = db.prepare<[string], { n: number | null }>('SELECT sum(count) AS n FROM record_counters WHERE org_id = ?');
  const totalStatus = db.prepare<[string, string], { n: number | null }>('SELECT sum(count) AS n FROM record_counters WHERE org_id = ? AND status = ?');
  const one = db.prepare<[string, string], RecordsTable>('SELECT * FROM records WHERE id = ? AND org_id = ?');
  // A deferred read transaction: the page and its total from one snapshot.
  const page = db.transaction((orgId: string, status: string | undefined, limit: number, offset: number) => {
    const rows = status === undefined ? pageAll.all(orgId, limit, offset) : pageStatus.all(orgId, status, limit, offset);
    const total = Number((status === undefined ? totalAll.get(orgId) : totalStatus.get(orgId, status))?.n ?? 0);
    return { rows, total };
  });
  // The feed as SQLite keeps it: an event is in it once the dispatcher's cursor has passed its seq.
  const inFeed = 'org_id = ? AND seq > ? AND seq <= (SELECT last_seq FROM outbox_cursor WHERE id = 1)';
  const feedRows = db.prepare<[string, number, number, number], EventRow>(`SELECT seq AS position, id, type, payload, created_at FROM outbox_events WHERE ${inFeed} ORDER BY seq LIMIT ? OFFSET ?`);
  const feedTotal = db.prepare<[string, number], { n: number }>(`SELECT count(*) AS n FROM outbox_events WHERE ${inFeed}`);
  const feed = db.transaction((orgId: string, after: number, limit: number, offset: number) => ({ rows: feedRows.all(orgId, after, limit, offset), total: feedTotal.get(orgId, after)!.n }));
  const recordExists = db.prepare<[string, string], { id: string }>('SELECT id FROM records WHERE id = ? AND org_id = ?');
  const latest = db.prepare<[string, string], StatementRow>('SELECT id, record_id, jws, status, leaf_index, tree_size FROM proof_statements WHERE org_id = ? AND record_id = ? ORDER BY id DESC LIMIT 1');
  const checkpoint = db.prepare<[number], CheckpointRow>('SELECT tree_size, note, cosignatures, timestamp_token FROM tlog_checkpoints WHERE tree_size >= ? AND publication IS NOT NULL ORDER BY tree_size LIMIT 1');
  const leaf = db.prepare<[number], { leaf_hash: string }>('SELECT leaf_hash FROM tlog_leaves WHERE leaf_index = ?');
  const node = db.prepare<[number, number], { hash: string }>('SELECT hash FROM tlog_nodes WHERE level = ? AND node_index = ?');
  return {
    latestStatement: async (orgId, recordId) => (recordExists.get(recordId, orgId) ? { exists: true, statement: latest.get(orgId, recordId) } : { exists: false }),
    firstPublishedCheckpoint: async (treeSize) => checkpoint.get(treeSize),
    async subtrees(keys) {
      const found = new Map<string, string>();
      for (const { level, index } of keys) {
        const hash = level === 0 ? leaf.get(index)?.leaf_hash : node.get(level, index)?.hash;
        if (hash) found.set(`${level}:${index}`, hash);
      }
      return found;
    },
    key: async (hash) => key.get(hash),
    page: async (orgId, status, limit, offset) => page(orgId, status, limit, offset),
    one: async (orgId, id) => one.get(id, orgId),
    feed: async (orgId, after, limit, offset) => feed(orgId, after, limit, offset),
    close: () => db.close(),
  };
}

function postgresReads(url: string): Reads {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  pool.on('error', () => {});
  // The total beside the page's rows, in one statement (one snapshot), as the maintained counts plus
  // their unfolded deltas; a page past the end still answers its total (the LEFT JOIN's one row).
  const total = (status: string) => `(SELECT coalesce(sum(n), 0) FROM (
      SELECT count AS n FROM record_counters WHERE org_id = $1${status}
      UNION ALL SELECT count_delta FROM record_count_deltas WHERE org_id = $1${status}) AS counted)`;
  const pageText = (byStatus: boolean) => {
    const status = byStatus ? ' AND status = $4' : '';
    return `SELECT t.total, p.* FROM (SELECT ${total(status)} AS total) t LEFT JOIN LATERAL (
        SELECT * FROM records WHERE org_id = $1${status} ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3) p ON true`;
  };
  const statements = { all: { name: 'reference-page-all', text: pageText(false) }, status: { name: 'reference-page-status', text: pageText(true) } };
  const feedText = `SELECT t.total, p.* FROM (SELECT count(*) AS total FROM outbox_events WHERE org_id = $1 AND feed_seq > $2) t LEFT JOIN LATERAL (
      SELECT feed_seq AS position, id, type, payload, created_at FROM outbox_events WHERE org_id = $1 AND feed_seq > $2 ORDER BY feed_seq LIMIT $3 OFFSET $4) p ON true`;
  return {
    async key(hash) {
      const { rows } = await pool.query<KeyRow>({ name: 'reference-key', text: 'SELECT org_id, scopes, revoked_at, expires_at FROM api_keys WHERE key_hash = $1', values: [hash] });
      return rows[0];
    },
    async page(orgId, status, limit, offset) {
      const statement = status === undefined ? statements.all : statements.status;
      const { rows } = await pool.query<RecordsTable & { total: string }>({ ...statement, values: status === undefined ? [orgId, limit, offset] : [orgId, limit, offset, status] });
      return { rows: rows.filter((row: RecordsTable) => row.id !== null), total: Number(rows[0]?.total ?? 0) };
    },
    async one(orgId, id) {
      const { rows } = await pool.query<RecordsTable>({ name: 'reference-one', text: 'SELECT * FROM records WHERE id = $1 AND org_id = $2', values: [id, orgId] });
      return rows[0];
    },
    async latestStatement(orgId, recordId) {
      const { rows } = await pool.query<StatementRow & { exists: boolean }>({
        name: 'reference-latest-statement',
        text: `SELECT EXISTS (SELECT 1 FROM records WHERE id = $2 AND org_id = $1) AS exists, s.* FROM (SELECT 1) one LEFT JOIN LATERAL (
            SELECT id, record_id, jws, status, leaf_index, tree_size FROM proof_statements WHERE org_id = $1 AND record_id = $2 ORDER BY id DESC LIMIT 1) s ON true`,
        values: [orgId, recordId],
      });
      const [row] = rows;
      return row?.exists ? { exists: true, ...(row.id !== null ? { statement: row } : {}) } : { exists: false };
    },
    async firstPublishedCheckpoint(treeSize) {
      const { rows } = await pool.query<CheckpointRow>({ name: 'reference-checkpoint', text: 'SELECT tree_size, note, cosignatures, timestamp_token FROM tlog_checkpoints WHERE tree_size >= $1 AND publication IS NOT NULL ORDER BY tree_size LIMIT 1', values: [treeSize] });
      return rows[0];
    },
    async subtrees(keys) {
      const leaves = keys.filter((k) => k.level === 0).map((k) => k.index);
      const nodes = keys.filter((k) => k.level > 0);
      const { rows } = await pool.query<{ level: number; node_index: string; hash: string }>({
        name: 'reference-subtrees',
        text: `SELECT 0 AS level, leaf_index AS node_index, leaf_hash AS hash FROM tlog_leaves WHERE leaf_index = ANY($1::bigint[])
          UNION ALL SELECT level, node_index, hash FROM tlog_nodes n JOIN unnest($2::int[], $3::bigint[]) AS k(level, node_index) USING (level, node_index)`,
        values: [leaves, nodes.map((k) => k.level), nodes.map((k) => k.index)],
      });
      return new Map(rows.map((row) => [`${row.level}:${Number(row.node_index)}`, row.hash]));
    },
    // The feed as PostgreSQL keeps it (feed_seq, set at dispatch), its count beside the page in one statement.
    async feed(orgId, after, limit, offset) {
      const { rows } = await pool.query<EventRow & { total: string }>({ name: 'reference-feed', text: feedText, values: [orgId, after, limit, offset] });
      return { rows: rows.filter((row) => row.id !== null), total: Number(rows[0]?.total ?? 0) };
    },
    close: () => void pool.end(),
  };
}

const sqlitePath = process.env.REFERENCE_SQLITE_PATH;
const databaseUrl = process.env.REFERENCE_DATABASE_URL;
if (!sqlitePath && !databaseUrl) throw new Error('set REFERENCE_SQLITE_PATH or REFERENCE_DATABASE_URL');
const reads = sqlitePath ? sqliteReads(sqlitePath) : postgresReads(databaseUrl!);

const problem = (reply: FastifyReply, status: number, code: string) => reply.code(status).type('application/problem+json').send(JSON.stringify({ status, code }));

/** The organization of a key that holds `scope`, or undefined (answered 401). */
async function readerOrg(request: FastifyRequest, scope = 'records:read'): Promise<string | undefined> {
  const header = request.headers.authorization;
  if (!header?.startsWith('Bearer ')) return undefined;
  const row = await reads.key(createHash('sha256').update(header.slice(7)).digest('hex'));
  if (!row || row.revoked_at !== null || (row.expires_at !== null && row.expires_at <= new Date().toISOString())) return undefined;
  return row.scopes.split(' ').includes(scope) ? row.org_id : undefined;
}

const app = Fastify();
app.get('/', async () => ({ status: 'ok' }));
app.get<{ Querystring: { limit?: string; offset?: string; status?: string } }>('/api/v1/records', async (request, reply) => {
  const orgId = await readerOrg(request);
  if (!orgId) return problem(reply, 401, 'unauthorized');
  const limit = Math.min(Math.max(Number(request.query.limit ?? 50) || 50, 1), 200);
  const offset = Math.max(Number(request.query.offset ?? 0) || 0, 0);
  const { rows, total } = await reads.page(orgId, request.query.status, limit, offset);
  return reply.type('application/json').send(JSON.stringify({ records: rows.map(toWorkOrder), total, limit, offset }));
});
app.get<{ Params: { id: string } }>('/api/v1/records/:id', async (request, reply) => {
  const orgId = await readerOrg(request);
  if (!orgId) return problem(reply, 401, 'unauthorized');
  const row = await reads.one(orgId, request.params.id);
  if (!row) return problem(reply, 404, 'not_found');
  return reply.type('application/json').send(JSON.stringify(toWorkOrder(row)));
});
app.get<{ Querystring: { after?: string; limit?: string; offset?: string } }>('/api/v1/events', async (request, reply) => {
  const orgId = await readerOrg(request, 'events:read');
  if (!orgId) return problem(reply, 401, 'unauthorized');
  const after = Math.max(Number(request.query.after ?? 0) || 0, 0);
  const limit = Math.min(Math.max(Number(request.query.limit ?? 50) || 50, 1), 200);
  const offset = Math.max(Number(request.query.offset ?? 0) || 0, 0);
  const { rows, total } = await reads.feed(orgId, after, limit, offset);
  const events = rows.map((row) => {
    const sequence = Number(row.position);
    return `{"id":${JSON.stringify(row.id)},"type":${JSON.stringify(row.type)},"sequence":${sequence},"occurredAt":${JSON.stringify(row.created_at)},"payload":${publishedPayloadJson(row.payload, sequence)}}`;
  });
  return reply.type('application/json').send(`{"events":[${events.join(',')}],"total":${total},"limit":${limit},"offset":${offset}}`);
});
const logKey = process.env.REFERENCE_VERIFIER_KEY ? parseVerifierKey(process.env.REFERENCE_VERIFIER_KEY) : undefined;
app.get<{ Params: { id: string } }>('/api/v1/records/:id/proof', async (request, reply) => {
  const orgId = await readerOrg(request, 'proofs:read');
  if (!orgId) return problem(reply, 401, 'unauthorized');
  if (!logKey) return problem(reply, 500, 'no_verifier_key');
  const { exists, statement } = await reads.latestStatement(orgId, request.params.id);
  if (!exists || !statement) return problem(reply, 404, 'not_found');
  const pending = () => reply.code(202).header('retry-after', '1').type('application/json').send(JSON.stringify({ status: 'pending', proofId: statement.id, recordId: statement.record_id }));
  if (statement.status !== 'sealed' || statement.leaf_index === null || statement.tree_size === null) return pending();
  const checkpoint = await reads.firstPublishedCheckpoint(Number(statement.tree_size));
  if (!checkpoint) return pending();
  const [leafIndex, treeSize] = [Number(statement.leaf_index), Number(checkpoint.tree_size)];
  const prove = (sha256: Parameters<typeof inclusionProof>[0], source: Parameters<typeof inclusionProof>[1]) => inclusionProof(sha256, source, leafIndex, treeSize);
  const hashes = await reads.subtrees(recordSubtreeReads(prove));
  const path = prove(sha256Sync, { perfect: (level, index) => Buffer.from(hashes.get(`${level}:${index}`)!, 'hex') });
  const header = JSON.parse(Buffer.from(statement.jws.split('.')[0]!, 'base64url').toString('utf8')) as { kid: string };
  const bundle = {
    status: 'sealed',
    version: BUNDLE_VERSION,
    mediaType: BUNDLE_MEDIA_TYPE,
    proofId: statement.id,
    recordId: statement.record_id,
    jws: statement.jws,
    leafIndex,
    treeSize,
    inclusionProof: path.map((hash) => Buffer.from(hash).toString('base64')),
    checkpoint: cosignedNote(checkpoint),
    ...(checkpoint.timestamp_token ? { timestampToken: checkpoint.timestamp_token } : {}),
    keys: { statementKid: header.kid, logKeyName: logKey.name, logKeyId: toHex(logKey.keyId) },
  };
  return reply.type(BUNDLE_MEDIA_TYPE).send(JSON.stringify(bundle));
});
await serveUntilStopped(app, () => reads.close());
