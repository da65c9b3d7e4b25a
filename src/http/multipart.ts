import type { FastifyInstance, FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import { AppError } from '../errors.js';

/** What a form of the public pages may send as `multipart/form-data`. */
export interface MultipartLimits {
  /** Bytes of one file: the attachment limit. */
  readonly maxFileBytes: number;
  readonly maxFiles: number;
  readonly maxFields: number;
  /** Bytes of one text field's value. */
  readonly maxFieldBytes: number;
}

/** One part of a form, in the order the browser sent it. */
export type FormPart =
  | { readonly kind: 'field'; readonly name: string; readonly value: string }
  | {
      readonly kind: 'file';
      readonly name: string;
      /** Empty for a file input left empty. */
      readonly filename: string;
      readonly mediaType: string;
      /** The file's bytes as they arrive; read them before asking for the next part. */
      readonly bytes: AsyncIterable<Uint8Array>;
    };

/**
 * Lets the routes of `app` take `multipart/form-data` bodies, parsed by @fastify/multipart (busboy)
 * as they stream in: nothing is buffered whole, and each limit ends the body with a 4xx.
 */
export async function acceptMultipart(app: FastifyInstance, limits: MultipartLimits): Promise<void> {
  await app.register(multipart, {
    throwFileSizeLimit: true,
    limits: {
      fileSize: limits.maxFileBytes,
      files: limits.maxFiles,
      fields: limits.maxFields,
      fieldSize: limits.maxFieldBytes,
      parts: limits.maxFiles + limits.maxFields,
      fieldNameSize: 100,
      headerPairs: 100,
    },
  });
}

export function isMultipart(request: FastifyRequest): boolean {
  return typeof request.headers['content-type'] === 'string' && request.headers['content-type'].toLowerCase().startsWith('multipart/form-data');
}

/**
 * The parts of a multipart request, each limit and each malformed body as an AppError naming it. The
 * bytes of a file part must be read (or abandoned by throwing) before the next part is asked for.
 */
export async function* formParts(request: FastifyRequest, limits: MultipartLimits): AsyncIterable<FormPart> {
  const parts = request.parts();
  for (;;) {
    let next: IteratorResult<Awaited<ReturnType<typeof parts.next>>['value']>;
    try {
      next = await parts.next();
    } catch (error) {
      throw multipartError(error, limits);
    }
    if (next.done) return;
    const part = next.value;
    if (part.type === 'field') {
      if (part.valueTruncated) throw tooLong(part.fieldname, limits.maxFieldBytes);
      yield { kind: 'field', name: part.fieldname, value: typeof part.value === 'string' ? part.value : String(part.value) };
      continue;
    }
    // A file input left empty arrives as a file part without a name (or with an empty one).
    yield { kind: 'file', name: part.fieldname, filename: part.filename ?? '', mediaType: part.mimetype ?? 'application/octet-stream', bytes: translated(part.file, limits) };
  }
}

async function* translated(stream: AsyncIterable<Uint8Array>, limits: MultipartLimits): AsyncIterable<Uint8Array> {
  try {
    for await (const piece of stream) yield piece;
  } catch (error) {
    throw multipartError(error, limits);
  }
}

function tooLong(field: string, maxBytes: number): AppError {
  return new AppError('payload_too_large', `The field "${field}" is longer than ${maxBytes.toLocaleString('en')} bytes.`);
}

/** @fastify/multipart's and busboy's errors as the closed set's: a limit is 413, anything else about the body 400. */
function multipartError(error: unknown, limits: MultipartLimits): AppError {
  if (error instanceof AppError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  switch (code) {
    case 'FST_REQ_FILE_TOO_LARGE':
      return new AppError('payload_too_large', `A file is larger than the limit of ${limits.maxFileBytes.toLocaleString('en')} bytes.`);
    case 'FST_FILES_LIMIT':
      return new AppError('payload_too_large', `At most ${limits.maxFiles} file${limits.maxFiles === 1 ? '' : 's'} can be sent at once.`);
    case 'FST_FIELDS_LIMIT':
    case 'FST_PARTS_LIMIT':
      return new AppError('payload_too_large', 'The form has more fields than it can take.');
    default:
      return new AppError('malformed_request', 'The form’s body is not valid multipart/form-data, or it was cut off before it ended.', { headers: { connection: 'close' } });
  }
}
