// A local webhook receiver: answers 200 at once, counts deliveries per event type, keeps the
// latency from the event's own timestamp to receipt, and checks a sample of signatures.
//   POST /hooks/<n>          a delivery (any n)
//   PUT  /secrets            {"/hooks/<n>": "<secret>", …} to verify signatures
//   GET  /stats?event=<type> counts, first/last receipt, latency percentiles, sample payloads
//   POST /reset              forget everything received
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';

interface Receipt {
  event: string;
  receivedAt: number;
  latencyMs: number;
  recordId: string | undefined;
  payload: Record<string, unknown>;
}

let receipts: Receipt[] = [];
let badSignatures = 0;
let checkedSignatures = 0;
const secrets = new Map<string, string>();

function readBody(request: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function checkSignature(urlPath: string, raw: Buffer, header: string | undefined): void {
  const secret = secrets.get(urlPath);
  if (!secret) return;
  checkedSignatures++;
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`);
  const given = Buffer.from(header ?? '');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) badSignatures++;
}

const server = http.createServer((request, response) => {
  void (async () => {
    const raw = await readBody(request);
    const url = new URL(request.url ?? '/', 'http://receiver');
    if (request.method === 'POST' && url.pathname.startsWith('/hooks/')) {
      const receivedAt = Date.now();
      response.writeHead(200).end();
      const envelope = JSON.parse(raw.toString('utf8')) as { event?: string; timestamp?: string; payload?: Record<string, unknown> };
      const payload = envelope.payload ?? {};
      const record = payload.record as { id?: string } | undefined;
      receipts.push({
        event: envelope.event ?? String(request.headers['x-webhook-event']),
        receivedAt,
        latencyMs: envelope.timestamp ? receivedAt - Date.parse(envelope.timestamp) : NaN,
        recordId: (payload.recordId as string | undefined) ?? record?.id,
        payload,
      });
      // Verifying every delivery would cost the receiver CPU the service needs: one in 50 is enough to catch a wrong signature.
      if (receipts.length % 50 === 1) checkSignature(url.pathname, raw, request.headers['x-webhook-signature'] as string | undefined);
      return;
    }
    if (request.method === 'PUT' && url.pathname === '/secrets') {
      for (const [hookPath, secret] of Object.entries(JSON.parse(raw.toString('utf8')) as Record<string, string>)) secrets.set(hookPath, secret);
      response.writeHead(204).end();
      return;
    }
    if (request.method === 'POST' && url.pathname === '/reset') {
      receipts = [];
      badSignatures = 0;
      checkedSignatures = 0;
      response.writeHead(204).end();
      return;
    }
    if (request.method === 'GET' && url.pathname === '/stats') {
      const event = url.searchParams.get('event');
      const chosen = event ? receipts.filter((r) => r.event === event) : receipts;
      const latencies = chosen.map((r) => r.latencyMs).filter((n) => Number.isFinite(n)).sort((a, b) => a - b);
      const withReceipts = url.searchParams.get('receipts') === '1';
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          count: chosen.length,
          firstAt: chosen[0]?.receivedAt ?? null,
          lastAt: chosen.at(-1)?.receivedAt ?? null,
          latencyP50Ms: percentile(latencies, 50),
          latencyP99Ms: percentile(latencies, 99),
          checkedSignatures,
          badSignatures,
          samplePayloads: chosen.slice(0, 3).map((r) => r.payload),
          ...(withReceipts ? { receipts: chosen.map((r) => ({ recordId: r.recordId, receivedAt: r.receivedAt, payload: r.payload })) } : {}),
        }),
      );
      return;
    }
    response.writeHead(request.method === 'GET' && url.pathname === '/' ? 200 : 404).end();
  })().catch(() => {
    if (!response.headersSent) response.writeHead(400).end();
  });
});
server.keepAliveTimeout = 72_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');

process.once('SIGTERM', () => server.close(() => process.exit(0)));
process.once('SIGINT', () => server.close(() => process.exit(0)));
