import { errors } from './errors.js';

/** Serialized size limit of a `metadata` object. */
export const MAX_METADATA_BYTES = 16 * 1024;
/** Keys of a `metadata` object, at most (the schema says so of what a client sends). */
export const MAX_METADATA_KEYS = 50;

/** The schema bounds the keys of `metadata`; its serialized size is checked here (400 like any schema error). */
export function assertMetadataSize(metadata: Record<string, unknown> | undefined, field = 'body.metadata'): void {
  if (metadata && Buffer.byteLength(JSON.stringify(metadata)) > MAX_METADATA_BYTES) {
    throw errors.validation([{ field, message: `must serialize to at most ${MAX_METADATA_BYTES} bytes` }]);
  }
}

/**
 * How a PATCH body's `metadata` changes the stored one: `replace` (`application/json`: what is sent is
 * the new metadata, whole) or `merge` (`application/merge-patch+json`: RFC 7396, nested objects merged
 * member by member, a `null` removing its member).
 */
export type MetadataPatchMode = 'replace' | 'merge';

/**
 * The metadata a PATCH leaves, as the text to store. A merge can grow the stored object past the
 * limits the schema checked on the body alone, so its result is checked again.
 */
export function patchedMetadata(storedJson: string, sent: Record<string, unknown>, mode: MetadataPatchMode): string {
  if (mode === 'replace') return JSON.stringify(sent);
  const merged = mergePatch(JSON.parse(storedJson), sent) as Record<string, unknown>;
  if (Object.keys(merged).length > MAX_METADATA_KEYS) {
    throw errors.validation([{ field: 'body.metadata', message: `would leave ${Object.keys(merged).length} keys once merged; at most ${MAX_METADATA_KEYS}` }]);
  }
  const json = JSON.stringify(merged);
  if (Buffer.byteLength(json) > MAX_METADATA_BYTES) {
    throw errors.validation([{ field: 'body.metadata', message: `must serialize to at most ${MAX_METADATA_BYTES} bytes once merged` }]);
  }
  return json;
}

/** RFC 7396 §2, MergePatch(Target, Patch). */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const result: Record<string, unknown> = {};
  if (isObject(target)) for (const [key, value] of Object.entries(target)) defineMember(result, key, value);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else defineMember(result, key, mergePatch(Object.hasOwn(result, key) ? result[key] : undefined, value));
  }
  return result;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A member by definition, not assignment: a stored key such as `__proto__` stays a key, not a prototype. */
function defineMember(object: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}
