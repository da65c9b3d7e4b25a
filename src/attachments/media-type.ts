import { fileTypeFromBuffer } from 'file-type';
import { AppError } from '../errors.js';

/**
 * The media types an attachment may have. Each is recognized from the file's own bytes (its magic
 * number, read by the `file-type` library), except plain text, which has none: text is accepted as
 * valid UTF-8 without NUL bytes that no binary format was recognized in.
 */
export const ALLOWED_MEDIA_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'image/heic', 'image/heif', 'application/pdf', 'text/plain'] as const;
export type AllowedMediaType = (typeof ALLOWED_MEDIA_TYPES)[number];

/** Bytes the recognizer looks at: `file-type` finds every format above within its first 4100. */
export const SNIFF_BYTES = 4100;

// HEIC is HEIF holding HEVC images: phones label either name on either brand, so the two are one family.
const SAME_FAMILY: Partial<Record<AllowedMediaType, AllowedMediaType>> = { 'image/heic': 'image/heif', 'image/heif': 'image/heic' };

// Refused before the body was read to its end: the connection closes, sparing the client the rest.
const unsupported = (detail: string) => new AppError('unsupported_media_type', detail, { headers: { connection: 'close' } });

/**
 * The declared `Content-Type` of an upload, checked against the allow-list: its essence, lowercased.
 * Text must be UTF-8 (or its ASCII subset), since that is what is checked and served.
 */
export function declaredMediaType(header: string | undefined): AllowedMediaType {
  const list = ALLOWED_MEDIA_TYPES.join(', ');
  if (!header) throw unsupported(`Send the file's media type as Content-Type: one of ${list}.`);
  const [essence = '', ...parameters] = header.split(';').map((part) => part.trim().toLowerCase());
  if (!(ALLOWED_MEDIA_TYPES as readonly string[]).includes(essence)) {
    throw unsupported(`Attachments of type "${essence.slice(0, 100)}" are not accepted; allowed: ${list}.`);
  }
  const charset = parameters.find((parameter) => parameter.startsWith('charset='))?.slice('charset='.length).replace(/"/g, '');
  if (essence === 'text/plain' && charset !== undefined && charset !== 'utf-8' && charset !== 'us-ascii') {
    throw unsupported(`Text attachments must be UTF-8, not "${charset.slice(0, 40)}".`);
  }
  return essence as AllowedMediaType;
}

/**
 * Checks that the first bytes of a file (up to SNIFF_BYTES, or the whole file when shorter) are what
 * the client declared. 415 when they are another format, or one not allowed.
 */
export async function assertBytesMatch(declared: AllowedMediaType, head: Uint8Array): Promise<void> {
  const detected = (await fileTypeFromBuffer(head))?.mime;
  if (declared === 'text/plain') {
    if (detected !== undefined) throw unsupported(`The bytes are ${detected}, not the declared text/plain.`);
    return;
  }
  if (detected === declared || (detected !== undefined && SAME_FAMILY[declared] === detected)) return;
  throw unsupported(
    detected === undefined
      ? `The bytes are not ${declared}: no allowed format was recognized in them.`
      : `The bytes are ${detected}, not the declared ${declared}.`,
  );
}

/** Checks text piece by piece as it streams: valid UTF-8 across piece boundaries, and no NUL byte. */
export class PlainTextCheck {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

  write(piece: Uint8Array): void {
    if (piece.includes(0)) throw unsupported('The text holds NUL bytes: it is not plain text.');
    this.decode(piece, true);
  }

  end(): void {
    this.decode(new Uint8Array(0), false);
  }

  private decode(piece: Uint8Array, more: boolean): void {
    try {
      this.decoder.decode(piece, { stream: more });
    } catch {
      throw unsupported('The text is not valid UTF-8.');
    }
  }
}
