import { errors } from './errors.js';

/** Serialized size limit of a `metadata` object. */
export const MAX_METADATA_BYTES = 16 * 1024;

/** The schema bounds the keys of `metadata`; its serialized size is checked here (400 like any schema error). */
export function assertMetadataSize(metadata: Record<string, unknown> | undefined, field = 'body.metadata'): void {
  if (metadata && Buffer.byteLength(JSON.stringify(metadata)) > MAX_METADATA_BYTES) {
    throw errors.validation([{ field, message: `must serialize to at most ${MAX_METADATA_BYTES} bytes` }]);
  }
}
