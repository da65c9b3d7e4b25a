import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { AppError } from '../errors.js';
import { receiveInChunks, type ChunkedUploadOptions } from './chunked-upload.js';

const jpegHead = Buffer.from('ffd8ffe000104a46494600010100000100010000', 'hex');

async function* inPieces(bytes: Buffer, pieceBytes: number): AsyncIterable<Uint8Array> {
  for (let i = 0; i < bytes.length; i += pieceBytes) yield bytes.subarray(i, i + pieceBytes);
}

function collecting(overrides: Partial<ChunkedUploadOptions> = {}) {
  const chunks: Buffer[] = [];
  const options: ChunkedUploadOptions = {
    declared: 'image/jpeg',
    maxBytes: 1_000_000,
    chunkBytes: 8192,
    // The writer's buffer is reused: keep a copy, as the database does.
    writeChunk: async (n, bytes) => {
      assert.equal(n, chunks.length);
      chunks.push(Buffer.from(bytes));
    },
    ...overrides,
  };
  return { chunks, options };
}

describe('receiving an upload in chunks', () => {
  it('hands on fixed-size chunks and a short last one whatever the pieces, with the size and SHA-256 of the whole', async () => {
    const file = Buffer.concat([jpegHead, randomBytes(30_000)]);
    for (const pieceBytes of [1000, 8192, 65536]) {
      const { chunks, options } = collecting();
      const received = await receiveInChunks(inPieces(file, pieceBytes), options);
      assert.deepEqual(received, { size: file.length, sha256: createHash('sha256').update(file).digest('hex'), chunks: 4 });
      assert.deepEqual(chunks.map((c) => c.length), [8192, 8192, 8192, file.length - 3 * 8192]);
      assert.ok(Buffer.concat(chunks).equals(file));
    }
  });

  it('refuses bytes of another type before writing any chunk, and stops at the size limit', async () => {
    const png = Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex'), randomBytes(20_000)]);
    const mismatch = collecting();
    await assert.rejects(receiveInChunks(inPieces(png, 1000), mismatch.options), (error: unknown) => error instanceof AppError && error.code === 'unsupported_media_type');
    assert.equal(mismatch.chunks.length, 0);

    const tooLarge = collecting({ maxBytes: 20_000 });
    await assert.rejects(receiveInChunks(inPieces(Buffer.concat([jpegHead, randomBytes(30_000)]), 4096), tooLarge.options), (error: unknown) => error instanceof AppError && error.code === 'payload_too_large');
    assert.ok(tooLarge.chunks.length <= 2, 'nothing past the limit is written');
  });

  it('refuses an empty body and checks a file shorter than what is sniffed once it has ended', async () => {
    await assert.rejects(receiveInChunks(inPieces(Buffer.alloc(0), 10), collecting().options), (error: unknown) => error instanceof AppError && error.code === 'validation_failed');
    const { chunks, options } = collecting({ declared: 'text/plain' });
    assert.equal((await receiveInChunks(inPieces(Buffer.from('short note'), 3), options)).size, 10);
    assert.equal(Buffer.concat(chunks).toString(), 'short note');
  });
});
