// The reference point for `create`: a minimal Fastify handler that writes one row and one
// outbox row in a transaction on SQLite (WAL, synchronous=NORMAL, as the service runs). No auth, no
// validation, no idempotency: what "the cheapest honest write endpoint" costs on this machine, so the
// report can show how far the full path is from it, measured in the same run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import SqliteDatabase from 'better-sqlite3';
import { serveUntilStopped } from './lib/serve-until-stopped.js';

const dir = mkdtempSync(path.join(tmpdir(), 'wo-reference-'));
const db = new SqliteDatabase(path.join(dir, 'reference.sqlite'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec(`CREATE TABLE items (id TEXT PRIMARY KEY, title TEXT NOT NULL, created_at TEXT NOT NULL);
         CREATE TABLE outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, type TEXT NOT NULL, payload TEXT NOT NULL, created_at TEXT NOT NULL)`);
const insertItem = db.prepare('INSERT INTO items (id, title, created_at) VALUES (?, ?, ?)');
const insertOutbox = db.prepare('INSERT INTO outbox (type, payload, created_at) VALUES (?, ?, ?)');
const create = db.transaction((item: { id: string; title: string; createdAt: string }) => {
  insertItem.run(item.id, item.title, item.createdAt);
  insertOutbox.run('item.created', JSON.stringify(item), item.createdAt);
});

const app = Fastify();
app.get('/', async () => ({ status: 'ok' }));
app.post('/items', async (request, reply) => {
  const body = request.body as { title?: unknown };
  const item = { id: randomUUID(), title: String(body?.title ?? ''), createdAt: new Date().toISOString() };
  create(item);
  return reply.code(201).send(item);
});
await serveUntilStopped(app, () => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});
