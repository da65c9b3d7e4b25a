import http from 'node:http';
import type { Logger } from 'pino';
import type { Witness } from './witness.js';

/** The Go witness's limit: a checkpoint with a few dozen signatures and 63 proof lines fits many times over. */
const MAX_BODY_BYTES = 16 * 1024;

/**
 * The witness's HTTP face: `POST /add-checkpoint` (submission prefix `/`) and `GET /healthz`.
 * node:http rather than the API's Fastify: the protocol is a few lines of text whose bytes matter,
 * and the witness shares nothing else with the service.
 */
export function witnessServer(witness: Witness, logger: Pick<Logger, 'info' | 'warn' | 'error'>): http.Server {
  return http.createServer((request, response) => {
    const send = (status: number, contentType: string, body: string, extra: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store', ...extra });
      response.end(body);
    };
    const url = request.url ?? '/';
    if (url === '/healthz' && request.method === 'GET') return send(200, 'text/plain; charset=utf-8', 'ok\n');
    if (url !== '/add-checkpoint') return send(404, 'text/plain; charset=utf-8', 'not found: this witness answers POST /add-checkpoint\n');
    if (request.method !== 'POST') return send(405, 'text/plain; charset=utf-8', 'add-checkpoint takes POST\n', { allow: 'POST' });

    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES && !refused) {
        refused = true;
        send(413, 'text/plain; charset=utf-8', `the body is larger than ${MAX_BODY_BYTES} bytes\n`, { connection: 'close' });
        request.destroy();
      }
      if (!refused) chunks.push(chunk);
    });
    request.on('end', () => {
      if (refused) return;
      const text = Buffer.concat(chunks).toString('utf8');
      witness.addCheckpoint(text).then(
        (answer) => {
          if (answer.status === 200) logger.info({ origin: text.split('\n\n')[1]?.split('\n')[0] }, 'checkpoint cosigned');
          else if (answer.status === 422) logger.warn({ status: answer.status, reason: answer.body.trim() }, 'checkpoint refused: it is not consistent with what this witness cosigned');
          else if (answer.status !== 409) logger.info({ status: answer.status, reason: answer.body.trim() }, 'checkpoint refused');
          send(answer.status, answer.contentType, answer.body);
        },
        (error: unknown) => {
          logger.error({ err: error }, 'add-checkpoint failed');
          send(500, 'text/plain; charset=utf-8', 'internal error\n');
        },
      );
    });
  });
}
