// The create contract's work done the plainest way, as a yardstick beside the service (bench `create`):
// Fastify with the service's own body and response schemas, better-sqlite3 statements prepared once on
// the service's own schema (its migrations: same tables, same indexes), and per request exactly what
// POST /api/v1/records promises: Bearer key lookup by SHA-256 with scope and revocation checks, an
// Idempotency-Key claim, the category check, the work order, its status counter, its history row and
// its outbox event in one transaction, then the stored answer. One commit per step, as a straightforward
// implementation would do it: no Kysely, no group commit, no hooks, no metrics. The difference between
// this and the two-row reference (reference-server.ts) is the price of the contract's work; the
// difference between this and the service is the price of how the service is built.
//
// REFERENCE_COMMIT=group: the floor of that work instead. The same statements, but every request of an
// event-loop turn shares one outer transaction committed once (as the service's group commit does), each
// request in its own savepoint, and the answer is sent once its group has committed. Everything runs
// synchronously between the request's arrival and the commit: no promise, no lock, no query builder. No
// implementation of the contract on this stack does less per request.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyReply } from 'fastify';
import SqliteDatabase from 'better-sqlite3';
import { serveUntilStopped } from './lib/serve-until-stopped.js';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { newId } from '../src/ids.js';
import { CreateRecordBody, RecordSchema, type CreateRecordInput } from '../src/records/schemas.js';
import { REFERENCE_CATEGORY, REFERENCE_KEY } from './lib/reference-tenant.js';


const dir = mkdtempSync(path.join(tmpdir(), 'wo-reference-same-'));
const file = path.join(dir, 'wo.sqlite');
const schema = openDatabase({ sqlitePath: file });
await migrateToLatest(schema);
await schema.close();

const db = new SqliteDatabase(file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('foreign_keys = ON');
db.pragma('temp_store = MEMORY');
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const now0 = new Date().toISOString();
db.prepare('INSERT INTO organizations (id, name, created_at) VALUES (?, ?, ?)').run('org_reference', 'reference', now0);
db.prepare(
  `INSERT INTO api_keys (id, org_id, name, prefix, key_hash, scopes, created_at, expires_at, revoked_at, last_used_at, created_by)
   VALUES ('key_reference', 'org_reference', 'reference', 'wo_rrrr', ?, 'records:read records:write', ?, NULL, NULL, NULL, 'bench')`,
).run(sha256(REFERENCE_KEY), now0);
db.prepare('INSERT INTO categories (id, org_id, name, description, created_at, updated_at, version) VALUES (?, ?, ?, NULL, ?, ?, 1)').run(
  REFERENCE_CATEGORY,
  'org_reference',
  'Plumbing',
  now0,
  now0,
);

const findKey = db.prepare('SELECT * FROM api_keys WHERE key_hash = ?');
const claim = db.prepare(
  `INSERT INTO idempotency_keys (org_id, key, fingerprint, state, created_at, locked_until, response_status, response_headers, response_body)
   VALUES (?, ?, ?, 'in_flight', ?, ?, NULL, NULL, NULL)`,
);
const complete = db.prepare(
  `UPDATE idempotency_keys SET state = 'completed', response_status = ?, response_headers = ?, response_body = ?
   WHERE org_id = ? AND key = ? AND state = 'in_flight' AND locked_until = ?`,
);
const findCategory = db.prepare('SELECT * FROM categories WHERE id = ? AND org_id = ?');
const insertRecord = db.prepare(
  `INSERT INTO records (id, org_id, category_id, status, address, requester_name, description, priority, due_at, assignee, asset_id,
     location_id, external_ref, metadata, resolution_notes, completed_at, closed_at, cancelled_at, created_at, updated_at, version)
   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL, NULL, ?, ?, 1)`,
);
const bumpCounter = db.prepare(
  'INSERT INTO record_counters (org_id, status, count) VALUES (?, ?, 1) ON CONFLICT (org_id, status) DO UPDATE SET count = record_counters.count + 1',
);
const insertHistory = db.prepare(
  `INSERT INTO record_events (id, org_id, record_id, action, from_status, to_status, actor_key_id, data, created_at)
   VALUES (?, ?, ?, 'created', NULL, ?, ?, ?, ?)`,
);
const insertEvent = db.prepare('INSERT INTO outbox_events (id, org_id, type, payload, created_at, dispatched_at) VALUES (?, ?, ?, ?, ?, NULL)');

const grouped = process.env.REFERENCE_COMMIT === 'group';
const beginGroup = db.prepare('BEGIN IMMEDIATE');
const commitGroup = db.prepare('COMMIT');
let openGroup: { committed: Promise<void>; resolve: () => void } | undefined;

/** Joins the turn's group (opening it if none is open); the promise settles once it has committed. */
function joinGroup(): Promise<void> {
  if (!openGroup) {
    beginGroup.run();
    let resolve!: () => void;
    const committed = new Promise<void>((r) => (resolve = r));
    openGroup = { committed, resolve };
    setImmediate(() => {
      const group = openGroup!;
      openGroup = undefined;
      commitGroup.run();
      group.resolve();
    });
  }
  return openGroup.committed;
}

class Refusal extends Error {
  constructor(readonly status: number) {
    super(String(status));
  }
}

const createInTransaction = db.transaction((orgId: string, keyId: string, input: CreateRecordInput) => {
  if (!findCategory.get(input.categoryId, orgId)) throw new Refusal(422);
  const now = new Date().toISOString();
  const status = input.assignee ? 'ASSIGNED' : 'OPEN';
  const record = {
    id: newId('record'),
    recordId: '',
    status,
    categoryId: input.categoryId,
    address: input.address,
    requesterName: input.requesterName,
    description: input.description,
    priority: input.priority ?? 'MEDIUM',
    dueAt: input.dueAt ?? null,
    assignee: input.assignee ?? null,
    assetId: input.assetId ?? null,
    locationId: input.locationId ?? null,
    externalRef: input.externalRef ?? null,
    metadata: input.metadata ?? {},
    resolutionNotes: null,
    completedAt: null,
    closedAt: null,
    cancelledAt: null,
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
  record.recordId = record.id;
  insertRecord.run(record.id, orgId, record.categoryId, status, record.address, record.requesterName, record.description, record.priority,
    record.dueAt, record.assignee, record.assetId, record.locationId, record.externalRef, JSON.stringify(record.metadata), now, now);
  bumpCounter.run(orgId, status);
  insertHistory.run(newId('recordEvent'), orgId, record.id, status, keyId, JSON.stringify(input.assignee ? { assignee: input.assignee } : {}), now);
  insertEvent.run(newId('event'), orgId, 'record.created', JSON.stringify({ recordId: record.id, record }), now);
  return record;
});

const app = Fastify();
app.addSchema(RecordSchema);
app.get('/', async () => ({ status: 'ok' }));
app.post('/api/v1/records', { schema: { body: CreateRecordBody, response: { 201: { $ref: 'Record' } } } }, async (request, reply: FastifyReply) => {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(String(request.headers.authorization ?? ''))?.[1];
  const key = bearer ? (findKey.get(sha256(bearer)) as { id: string; org_id: string; scopes: string; revoked_at: string | null; expires_at: string | null } | undefined) : undefined;
  const now = new Date().toISOString();
  if (!key || key.revoked_at || (key.expires_at && key.expires_at <= now)) return reply.code(401).send();
  if (!key.scopes.split(' ').includes('records:write')) return reply.code(403).send();
  const idempotencyKey = request.headers['idempotency-key'];
  if (typeof idempotencyKey !== 'string') return reply.code(400).send();
  const lease = new Date(Date.now() + 60_000).toISOString();
  const committed = grouped ? joinGroup() : undefined;
  try {
    claim.run(key.org_id, idempotencyKey, sha256(`POST\n${request.url}\n${JSON.stringify(request.body)}`), now, lease);
  } catch {
    return reply.code(409).send();
  }
  let record;
  try {
    record = createInTransaction(key.org_id, key.id, request.body as CreateRecordInput);
  } catch (error) {
    if (error instanceof Refusal) return reply.code(error.status).send();
    throw error;
  }
  const body = reply.serialize(record) as string;
  const headers = { 'content-type': 'application/json; charset=utf-8', location: `/api/v1/records/${record.id}`, etag: '"1"' };
  complete.run(201, JSON.stringify(headers), body, key.org_id, idempotencyKey, lease);
  await committed;
  return reply.code(201).headers(headers).send(body);
});
await serveUntilStopped(app, () => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});
