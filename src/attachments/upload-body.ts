import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { Upload } from './service.js';

/** Upload bodies, handed over as the request's stream by the content-type parser below. */
const uploadStreams = new WeakMap<FastifyRequest, Readable>();

/**
 * Makes every route of `app` (an encapsulated plugin) take its body as the stream it is, whatever
 * its Content-Type: an upload is never buffered, and the attachment service reads it chunk by chunk
 * (its own limit and media-type checks apply). These become the plugin's only parsers.
 */
export function acceptStreamedUploads(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (request, payload, done) => {
    uploadStreams.set(request, payload as Readable);
    done(null, undefined);
  });
}

/** The upload a request carries (to a route of a plugin that `acceptStreamedUploads`): its headers, and its body as it arrives. */
export function uploadOf(request: FastifyRequest, filename: string): Upload {
  const encoding = request.headers['content-encoding']?.trim().toLowerCase();
  if (encoding && encoding !== 'identity') {
    throw new AppError('unsupported_media_type', `Content-Encoding "${encoding.slice(0, 40)}" is not supported: send the file as it is.`, {
      headers: { 'accept-encoding': 'identity', connection: 'close' },
    });
  }
  const length = request.headers['content-length'];
  const stream = uploadStreams.get(request);
  return {
    filename,
    contentType: request.headers['content-type'],
    contentLength: length === undefined ? undefined : Number(length),
    body: stream ? bytesOf(stream) : undefined,
  };
}

/** The body's bytes; a client that goes away mid-body ends it with a 400 (nobody is left to read it). */
async function* bytesOf(stream: Readable): AsyncIterable<Uint8Array> {
  try {
    // Not destroyed when the reader stops early (a refusal): the answer still goes out on its socket.
    for await (const piece of stream.iterator({ destroyOnReturn: false })) yield piece as Uint8Array;
  } catch {
    throw new AppError('malformed_request', 'The upload was cut off: the connection closed before the whole body arrived.', { headers: { connection: 'close' } });
  }
}
