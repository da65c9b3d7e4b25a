import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the proxy does with the n-th request (from 0): answer it itself, forward it, or forward it and lose the answer. */
export type ProxyAction = { status: number; headers?: Record<string, string>; body?: unknown } | 'forward' | 'forward-then-drop' | 'drop';

export interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  at: number;
}

export interface FlakyProxy {
  url: string;
  seen: SeenRequest[];
  close(): Promise<void>;
}

/** A real HTTP server on loopback in front of `upstream`, failing requests as `plan` says. */
export async function startFlakyProxy(upstream: string, plan: (index: number, request: SeenRequest) => ProxyAction): Promise<FlakyProxy> {
  const seen: SeenRequest[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const request: SeenRequest = { method: req.method!, url: req.url!, headers: req.headers, at: Date.now() };
    const action = plan(seen.length, request);
    seen.push(request);
    if (action === 'drop') return req.socket.destroy();
    if (typeof action === 'object') {
      res.writeHead(action.status, { 'content-type': 'application/problem+json', ...action.headers });
      return res.end(JSON.stringify(action.body ?? {}));
    }
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => name !== 'host' && name !== 'connection') as [string, string][]);
    const answer = await fetch(`${upstream}${req.url}`, { method: req.method!, headers, ...(chunks.length ? { body: Buffer.concat(chunks) } : {}) });
    const body = Buffer.from(await answer.arrayBuffer());
    // The service did the work; the client never hears of it.
    if (action === 'forward-then-drop') return req.socket.destroy();
    const answerHeaders: Record<string, string> = {};
    answer.headers.forEach((value, name) => {
      if (name !== 'content-encoding' && name !== 'transfer-encoding' && name !== 'connection' && name !== 'content-length') answerHeaders[name] = value;
    });
    res.writeHead(answer.status, answerHeaders);
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export const unavailable = (retryAfter: string) => ({
  status: 503,
  headers: { 'retry-after': retryAfter },
  body: { type: 'urn:wo:problem:unavailable', title: 'Service unavailable', status: 503, detail: 'Try again later.', code: 'unavailable', requestId: 'req_proxy' },
});

export const rateLimited = (retryAfter: string) => ({
  status: 429,
  headers: { 'retry-after': retryAfter },
  body: { type: 'urn:wo:problem:rate_limited', title: 'Too many requests', status: 429, detail: 'Slow down.', code: 'rate_limited', requestId: 'req_proxy' },
});
