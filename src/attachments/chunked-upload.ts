import { createHash } from 'node:crypto';
import { AppError } from '../errors.js';
import { PlainTextCheck, SNIFF_BYTES, assertBytesMatch, type AllowedMediaType } from './media-type.js';

/** What an upload's bytes turned out to be once all of them arrived. */
export interface ReceivedBytes {
  size: number;
  /** Lowercase hex SHA-256 of every byte. */
  sha256: string;
  chunks: number;
}

export interface ChunkedUploadOptions {
  declared: AllowedMediaType;
  maxBytes: number;
  /** Size of every chunk but the last (at least SNIFF_BYTES, so the first one holds what is sniffed). */
  chunkBytes: number;
  /** Stores chunk `n`. The buffer is reused once the promise settles: copy it if it must outlive that. */
  writeChunk: (n: number, bytes: Uint8Array) => Promise<void>;
}

export function payloadTooLarge(maxBytes: number): AppError {
  // @NOTE: the rest of the body is not read: closing the connection spares the client sending it.
  return new AppError('payload_too_large', `The file is larger than the ${maxBytes} bytes an attachment may have.`, { headers: { connection: 'close' } });
}

/**
 * Reads an upload as it arrives: counts it against the limit, hashes it, checks its media type from
 * its first bytes (and, for text, every byte), and hands it on in chunks of `chunkBytes`. Memory stays
 * at one chunk whatever the file's size; each chunk is written before more of the body is read, so a
 * slow database slows the client down (TCP backpressure) instead of filling memory.
 */
export async function receiveInChunks(body: AsyncIterable<Uint8Array>, options: ChunkedUploadOptions): Promise<ReceivedBytes> {
  const { declared, maxBytes, chunkBytes, writeChunk } = options;
  if (chunkBytes < SNIFF_BYTES) throw new Error(`chunks of ${chunkBytes} bytes cannot hold the ${SNIFF_BYTES} bytes sniffed`);
  const hash = createHash('sha256');
  const text = declared === 'text/plain' ? new PlainTextCheck() : undefined;
  const chunk = Buffer.allocUnsafeSlow(chunkBytes);
  let filled = 0;
  let chunks = 0;
  let size = 0;
  let sniffed = false;

  for await (const piece of body) {
    size += piece.length;
    if (size > maxBytes) throw payloadTooLarge(maxBytes);
    hash.update(piece);
    text?.write(piece);
    for (let offset = 0; offset < piece.length; ) {
      const take = Math.min(chunkBytes - filled, piece.length - offset);
      chunk.set(piece.subarray(offset, offset + take), filled);
      filled += take;
      offset += take;
      if (!sniffed && filled >= SNIFF_BYTES) {
        await assertBytesMatch(declared, chunk.subarray(0, filled));
        sniffed = true;
      }
      if (filled === chunkBytes) {
        await writeChunk(chunks++, chunk);
        filled = 0;
      }
    }
  }
  if (size === 0) {
    throw new AppError('validation_failed', 'The body is empty: send the file’s bytes.', { errors: [{ field: 'body', message: 'must not be empty' }] });
  }
  if (!sniffed) await assertBytesMatch(declared, chunk.subarray(0, filled));
  text?.end();
  if (filled > 0) await writeChunk(chunks++, chunk.subarray(0, filled));
  return { size, sha256: hash.digest('hex'), chunks };
}
