import compress from '@fastify/compress';
import type { FastifyInstance } from 'fastify';

/** Answers smaller than this are sent as they are: compressing them saves too little to pay for. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;

/** Compressed in one call up to this size (the plugin's synchronous path); streamed above it. */
export const SYNC_COMPRESSION_MAX_BYTES = 1024 * 1024;

/** gzip's level for answers (zlib's default is 6). */
export const GZIP_LEVEL = 3;

/** Text the service answers with: JSON (problems included), text, HTML, CSS, JavaScript, XML, Prometheus exposition. */
const TEXT_MEDIA_TYPE = /^(?:text\/(?!event-stream)|application\/(?:[\w.-]+\+)?json\b|application\/(?:javascript|xml|openmetrics-text)\b)/i;

/** Media that is compressed already, or bytes a client must receive exactly as stored. */
const STORED_MEDIA_TYPE = /^(?:image|audio|video)\/|^application\/(?:pdf|zip|gzip|octet-stream)\b/i;

/** Routes that answer a stored file's bytes (attachments' content): never re-encoded, whatever its media type. */
const STORED_FILE_ROUTE = /\/attachments\/:[^/]+\/content$/;

/**
 * gzip and brotli for answers of at least 1 KiB, when the request's `Accept-Encoding` asks for one
 * (brotli preferred at equal weight). Without it, or with `identity`, the answer is the same bytes and
 * headers as without the plugin. Partial answers (206, `Content-Range`) are never compressed, and
 * request bodies are not decompressed: the JSON parser keeps refusing `Content-Encoding` with a 415.
 */
export async function installCompression(app: FastifyInstance): Promise<void> {
  // Before the plugin's own onRoute hook, which reads `compress` to decide on each route.
  app.addHook('onRoute', (route) => {
    if (STORED_FILE_ROUTE.test(route.url)) route.compress = false;
  });
  await app.register(compress, {
    global: true,
    globalDecompression: false,
    threshold: COMPRESSION_THRESHOLD_BYTES,
    // Answers up to 1 MiB are compressed in one call, not through a stream. The plugin streams
    // anything over 8 KiB on a 2-core host, to spread the work over libuv's threads; for a
    // 240 KB answer (1,000 meter readings) that cost 43 % more instructions per request in all
    // (bench/tools/readings-instructions.mjs: 1.44 G against 1.00 G for 10 batches), most of it
    // stream plumbing on the event loop itself, while gzip proper took ~1 ms.
    syncThreshold: SYNC_COMPRESSION_MAX_BYTES,
    // Level 3, deflate's fastest family: 3 % larger than level 6 on that answer, 7 % fewer
    // instructions per request. nginx's default is 1.
    zlibOptions: { level: GZIP_LEVEL },
    encodings: ['br', 'gzip'],
    // The plugin falls back to mime-db for types this refuses; that fallback keeps refusing JPEG,
    // PNG, WebP, GIF and PDF, and the file route above covers the rest (an SVG attachment).
    customTypes: (type: string) => !STORED_MEDIA_TYPE.test(type) && TEXT_MEDIA_TYPE.test(type),
  });
}
