import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: http.IncomingHttpHeaders;
  /** The raw body exactly as received. */
  body: string;
  json: { event: string; payload: Record<string, unknown>; timestamp: string };
  receivedAt: number;
}

/** What the receiver answers; 'hang' never answers (the sender must time out). */
export type ReceiverAnswer = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Decides the answer to each request (`index` counts from 0); 200 by default. */
  answer: (request: ReceivedWebhook, index: number) => ReceiverAnswer;
  ofEvent(event: string): ReceivedWebhook[];
  /** Requests open right now, and the most ever open at once. */
  inFlight: number;
  maxInFlight: number;
  close(): Promise<void>;
}

/** A real HTTP receiver on 127.0.0.1 that records every delivery. */
export async function startReceiver(answer: WebhookReceiver['answer'] = () => ({ status: 200 })): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const receiver: WebhookReceiver = {
    url: '',
    received,
    answer,
    ofEvent: (event) => received.filter((r) => r.json.event === event),
    inFlight: 0,
    maxInFlight: 0,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((req, res) => {
    receiver.inFlight++;
    receiver.maxInFlight = Math.max(receiver.maxInFlight, receiver.inFlight);
    let open = true;
    const finished = () => {
      if (open) receiver.inFlight--;
      open = false;
    };
    res.on('close', finished);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: ReceivedWebhook['json'];
      try {
        json = JSON.parse(body) as ReceivedWebhook['json'];
      } catch {
        json = { event: '?', payload: {}, timestamp: '' };
      }
      const entry: ReceivedWebhook = { headers: req.headers, body, json, receivedAt: Date.now() };
      const index = received.length;
      received.push(entry);
      const reply = receiver.answer(entry, index);
      if (reply === 'hang') return;
      res.writeHead(reply.status, reply.headers ?? {});
      res.end(reply.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return receiver;
}

/** Receivers started for a suite, closed together when it ends. */
export function receiverPool(): { start(answer?: WebhookReceiver['answer']): Promise<WebhookReceiver>; closeAll(): Promise<void> } {
  const started: WebhookReceiver[] = [];
  return {
    async start(answer) {
      const receiver = await startReceiver(answer);
      started.push(receiver);
      return receiver;
    },
    closeAll: async () => {
      await Promise.all(started.map((receiver) => receiver.close()));
    },
  };
}
