// A webhook receiver built on @work-order-api/client: it verifies each delivery, records it in an
// inbox (SQLite) keyed by the webhook id, answers 204 at once and processes it afterwards.
//
//   WEBHOOK_SECRET=whsec_… PORT=3000 INBOX=./inbox.db node --import tsx examples/receiver/receiver.ts
//
// A delivery seen before (a retry, a manual redelivery, the same event from the feed) is answered
// 204 again but not processed again. Deliveries answered but not yet processed when the process
// stopped are processed at the next start.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import { verifyWebhook, WebhookVerificationError, type VerifiedWebhook } from '@work-order-api/client';

export interface ReceiverOptions {
  /** The subscription's secret; during a rotation, the new and the old one. */
  secrets: string[];
  /** Path of the inbox database. */
  inboxPath: string;
  /** What to do with each delivery, once. */
  process: (delivery: VerifiedWebhook) => Promise<void>;
  port?: number;
  host?: string;
}

export interface RunningReceiver {
  url: string;
  /** Resolves once every delivery received so far has been processed. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(options: ReceiverOptions): Promise<RunningReceiver> {
  const inbox = new Database(options.inboxPath);
  inbox.pragma('journal_mode = WAL');
  inbox.exec(`CREATE TABLE IF NOT EXISTS inbox (
    id TEXT PRIMARY KEY,           -- the webhook id: the same on every retry and redelivery
    body TEXT NOT NULL,
    received_at TEXT NOT NULL,
    processed_at TEXT
  )`);
  const insert = inbox.prepare('INSERT OR IGNORE INTO inbox (id, body, received_at) VALUES (?, ?, ?)');
  const markProcessed = inbox.prepare('UPDATE inbox SET processed_at = ? WHERE id = ?');
  const unprocessed = inbox.prepare('SELECT body FROM inbox WHERE processed_at IS NULL ORDER BY received_at');

  // One delivery at a time, in the order received: processing never holds up an answer.
  let queue = Promise.resolve();
  const enqueue = (delivery: VerifiedWebhook) => {
    queue = queue.then(async () => {
      try {
        await options.process(delivery);
        markProcessed.run(new Date().toISOString(), delivery.id);
      } catch (error) {
        // Left unprocessed: retried at the next start.
        console.error(`processing ${delivery.id} failed:`, error);
      }
    });
  };
  for (const row of unprocessed.all() as Array<{ body: string }>) enqueue(JSON.parse(row.body) as VerifiedWebhook);

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      let delivery: VerifiedWebhook;
      try {
        delivery = await verifyWebhook(Buffer.concat(chunks), req.headers, options.secrets);
      } catch (error) {
        res.writeHead(error instanceof WebhookVerificationError ? 401 : 400).end();
        return;
      }
      const isNew = insert.run(delivery.id, JSON.stringify(delivery), new Date().toISOString()).changes === 1;
      res.writeHead(204).end();
      if (isNew) enqueue(delivery);
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}/`,
    idle: () => queue,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await queue;
      inbox.close();
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const secrets = [process.env.WEBHOOK_SECRET, process.env.WEBHOOK_SECRET_PREVIOUS].filter((secret): secret is string => Boolean(secret));
  if (secrets.length === 0) throw new Error('set WEBHOOK_SECRET to the subscription secret (whsec_…)');
  const receiver = await startReceiver({
    secrets,
    inboxPath: process.env.INBOX ?? './inbox.db',
    port: Number(process.env.PORT ?? 3000),
    host: process.env.HOST ?? '127.0.0.1',
    process: async (delivery) => console.log(delivery.id, delivery.event, JSON.stringify(delivery.payload)),
  });
  console.log(`receiving webhooks at ${receiver.url}`);
}
