import type { Db, Executor } from '../db/database.js';
import type { InTransaction } from '../idempotency/in-transaction.js';
import type { AttachmentsTable } from './tables.js';
import type { Page } from '../db/page.js';
import { AppError, errors } from '../errors.js';
import { emitEvent } from '../events/outbox.js';
import type { EventType } from '../events/catalogue.js';
import type { Principal } from '../keys/api-keys.js';
import { newId } from '../ids.js';
import { isoNow, type Clock } from '../clock.js';
import { findRecord, insertHistory } from '../records/repository.js';
import { payloadTooLarge, receiveInChunks } from './chunked-upload.js';
import { declaredMediaType, type AllowedMediaType } from './media-type.js';
import {
  deleteUnlessEvidence,
  deleteUploading,
  deleteUploadsStartedBefore,
  findStored,
  insertChunk,
  insertUploading,
  listStored,
  listStoredOfRequest,
  markStored,
  toAttachment,
  type StoredAttachmentRow,
} from './repository.js';
import type { Attachment } from './schemas.js';
import type { ChunkReader } from './chunk-reader.js';

/**
 * Bytes per stored chunk. Larger chunks mean fewer statements per file; smaller ones less memory per
 * upload in flight and less read past the edges of a Range (docs/architecture.md, "Attachments").
 */
export const CHUNK_BYTES = 512 * 1024;
/** How much of a file a download reads with one statement: four chunks of the default size. */
const READ_RUN_BYTES = 2 * 1024 * 1024;

/** An upload still `uploading` this long after it started was left by a process that died. */
export const ABANDONED_UPLOAD_MS = 60 * 60_000;

export interface Upload {
  filename: string;
  /** The request's Content-Type. */
  contentType: string | undefined;
  /** The request's Content-Length, when it sent one. */
  contentLength: number | undefined;
  /** The body as it arrives; undefined when the request has none. */
  body: AsyncIterable<Uint8Array> | undefined;
}

/** An upload whose bytes are all in, not yet visible: `store` makes it so, `discard` drops it. */
export interface ReceivedUpload {
  readonly row: StoredAttachmentRow;
}

/** A stored file opened for reading: its metadata, and its bytes by range. */
export interface AttachmentContent {
  attachment: Attachment;
  /** The bytes from `start` to `end`, both included, one chunk at a time. */
  read(start: number, end: number): AsyncIterable<Uint8Array>;
}


/** Files attached to work orders, their bytes kept in the database in chunks. */
export class AttachmentService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly maxBytes: number,
    /** How this database hands a chunk's bytes back (chosen per database in feature.ts). */
    private readonly readChunks: ChunkReader,
    private readonly chunkBytes = CHUNK_BYTES,
  ) {}

  /** Receives a work order's upload (see receiveInto). */
  async receive(principal: Principal, recordId: string, upload: Upload): Promise<ReceivedUpload> {
    assertSafeFilename(upload.filename);
    const declared = declaredMediaType(upload.contentType);
    if (upload.contentLength !== undefined && upload.contentLength > this.maxBytes) throw payloadTooLarge(this.maxBytes);
    if (!(await findRecord(this.db, principal.orgId, recordId))) throw errors.notFound(`Work order "${recordId}"`);
    return this.receiveInto(this.uploadingRow(principal.orgId, { record_id: recordId, request_id: null }, upload.filename, declared), upload);
  }

  /**
   * The same for a work request's file (docs/requests.md): owned by the request until its approval
   * gives it to the work order. The caller has checked the request; `allowed` narrows the media types
   * (a public form takes photos only). Made visible by `storeForRequest` in the caller's transaction.
   */
  async receiveForRequest(orgId: string, requestId: string, upload: Upload, allowed?: ReadonlySet<string>): Promise<ReceivedUpload> {
    assertSafeFilename(upload.filename);
    const declared = declaredMediaType(upload.contentType);
    if (allowed && !allowed.has(declared)) throw new AppError('unsupported_media_type', `Only photos can be sent here (${[...allowed].join(', ')}), not ${declared}.`);
    if (upload.contentLength !== undefined && upload.contentLength > this.maxBytes) throw payloadTooLarge(this.maxBytes);
    return this.receiveInto(this.uploadingRow(orgId, { record_id: null, request_id: requestId }, upload.filename, declared), upload);
  }

  /** Makes a received file of a work request visible, in the caller's transaction (the request's own event says so). */
  async storeForRequest(tx: Executor, received: ReceivedUpload): Promise<void> {
    const { row } = received;
    if (!(await markStored(tx, row.id, row.size, row.sha256))) {
      throw errors.conflict('The upload took so long that it was discarded as abandoned; send it again.');
    }
  }

  async listForRequest(orgId: string, requestId: string, page: Page): Promise<{ rows: StoredAttachmentRow[]; total: number }> {
    return listStoredOfRequest(this.db, orgId, requestId, page);
  }

  private uploadingRow(orgId: string, owner: Pick<AttachmentsTable, 'record_id' | 'request_id'>, filename: string, mediaType: string): AttachmentsTable {
    return {
      id: newId('attachment'),
      org_id: orgId,
      ...owner,
      filename,
      media_type: mediaType,
      state: 'uploading',
      size: 0,
      sha256: null,
      chunk_bytes: this.chunkBytes,
      evidence_at: null,
      created_at: isoNow(this.clock),
    };
  }

  /**
   * Streams an upload into chunks of an `uploading` row: checked (media type, size) and hashed as it
   * arrives. Whatever stops it (a refusal, the client going away) deletes what it wrote.
   */
  private async receiveInto(row: AttachmentsTable, upload: Upload): Promise<ReceivedUpload> {
    await insertUploading(this.db, row);
    try {
      const received = await receiveInChunks(upload.body ?? noBytes(), {
        declared: row.media_type as AllowedMediaType,
        maxBytes: this.maxBytes,
        chunkBytes: this.chunkBytes,
        writeChunk: (n, bytes) => insertChunk(this.db, row.id, n, bytes),
      });
      return { row: { ...row, state: 'stored', size: received.size, sha256: received.sha256 } };
    } catch (error) {
      await this.discard({ row: row as StoredAttachmentRow });
      throw error;
    }
  }

  /** Makes a received upload visible, with its history entry and event. `within` runs last in the transaction. */
  async store(principal: Principal, received: ReceivedUpload, within?: InTransaction<Attachment>): Promise<Attachment> {
    const { row } = received;
    return this.db.transaction().execute(async (tx) => {
      if (!(await markStored(tx, row.id, row.size, row.sha256))) {
        throw errors.conflict('The upload took so long that it was discarded as abandoned; send it again.');
      }
      const attachment = toAttachment(row);
      const now = isoNow(this.clock);
      await this.recordChange(tx, principal, attachment, 'attachment_added', 'record.attachment_added', now);
      await within?.(tx, attachment);
      return attachment;
    });
  }

  /** Drops a received upload that will not be stored. Best effort: the sweeper removes what this cannot. */
  async discard(received: ReceivedUpload): Promise<void> {
    await deleteUploading(this.db, received.row.id).catch(() => {});
  }

  async list(orgId: string, recordId: string, page: Page): Promise<{ attachments: Attachment[]; total: number }> {
    if (!(await findRecord(this.db, orgId, recordId))) throw errors.notFound(`Work order "${recordId}"`);
    const { rows, total } = await listStored(this.db, orgId, recordId, page);
    return { attachments: rows.map(toAttachment), total };
  }

  async get(orgId: string, recordId: string, id: string): Promise<Attachment> {
    return toAttachment(await this.find(orgId, recordId, id));
  }

  async openContent(orgId: string, recordId: string, id: string): Promise<AttachmentContent> {
    const row = await this.find(orgId, recordId, id);
    const readChunks = this.readChunks;
    return {
      attachment: toAttachment(row),
      async *read(start, end) {
        const first = Math.floor(start / row.chunk_bytes);
        const last = Math.floor(end / row.chunk_bytes);
        // Chunks are read in runs of about READ_RUN_BYTES (one statement each on PostgreSQL), the next
        // run while this one is sent: two runs in memory at most, and the database's round trip
        // overlaps the client's.
        const perRun = Math.max(1, Math.floor(READ_RUN_BYTES / row.chunk_bytes));
        const ahead = (from: number) => {
          const reading = readChunks(row.id, from, Math.min(last, from + perRun - 1));
          reading.catch(() => {}); // awaited below; a reader that stops early leaves it unawaited
          return reading;
        };
        let next = ahead(first);
        for (let runStart = first; runStart <= last; runStart += perRun) {
          const run = await next;
          if (runStart + perRun <= last) next = ahead(runStart + perRun);
          for (const [i, pieces] of run.entries()) {
            const n = runStart + i;
            // Deleted while being read: the connection is cut rather than the file ending short.
            if (!pieces) throw new Error(`chunk ${n} of attachment ${row.id} is gone`);
            // The wanted bytes of the chunk, [from, to), out of its pieces.
            const from = n === first ? start - n * row.chunk_bytes : 0;
            const to = n === last ? end - n * row.chunk_bytes + 1 : Infinity;
            let offset = 0;
            for (const piece of pieces) {
              const [a, b] = [Math.max(from - offset, 0), Math.min(to - offset, piece.length)];
              offset += piece.length;
              if (a < b) yield a === 0 && b === piece.length ? piece : piece.subarray(a, b);
            }
          }
        }
      },
    };
  }

  /** Deletes a file with its bytes; 409 once a completion named it as evidence. */
  async delete(principal: Principal, recordId: string, id: string): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      const row = await findStored(tx, principal.orgId, recordId, id);
      if (!row) throw errors.notFound(`Attachment "${id}" of work order "${recordId}"`);
      if (row.evidence_at !== null) throw evidenceCannotBeDeleted(id);
      if (!(await deleteUnlessEvidence(tx, id))) {
        // Lost a race: to another delete (404), or to a completion that made it evidence meanwhile (409).
        if (!(await findStored(tx, principal.orgId, recordId, id))) throw errors.notFound(`Attachment "${id}" of work order "${recordId}"`);
        throw evidenceCannotBeDeleted(id);
      }
      await this.recordChange(tx, principal, toAttachment(row), 'attachment_deleted', 'record.attachment_deleted', isoNow(this.clock));
    });
  }

  /** Deletes uploads their process abandoned (it died mid-upload); returns how many. */
  async sweepAbandonedUploads(): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - ABANDONED_UPLOAD_MS).toISOString();
    return deleteUploadsStartedBefore(this.db, cutoff);
  }

  private async find(orgId: string, recordId: string, id: string): Promise<StoredAttachmentRow> {
    const row = await findStored(this.db, orgId, recordId, id);
    if (!row) throw errors.notFound(`Attachment "${id}" of work order "${recordId}"`);
    return row;
  }

  /** The work order's history entry and the event of an attachment added or deleted. */
  private async recordChange(tx: Executor, principal: Principal, attachment: Attachment, action: string, type: EventType, now: string): Promise<void> {
    const { id: attachmentId, recordId, filename, mediaType, size, sha256 } = attachment;
    await insertHistory(tx, {
      id: newId('recordEvent'),
      org_id: principal.orgId,
      record_id: recordId,
      action,
      from_status: null,
      to_status: null,
      actor_key_id: principal.keyId,
      actor_name: principal.actor.name ?? null,
      data: JSON.stringify({ attachmentId, filename, mediaType, size, sha256 }),
      created_at: now,
    });
    await emitEvent(tx, { orgId: principal.orgId, type, payload: { recordId, attachment }, occurredAt: now });
  }
}

function evidenceCannotBeDeleted(id: string): AppError {
  return errors.inUse(`Attachment "${id}" is evidence in a completion proof of this work order, which names its SHA-256: it is kept for as long as the proof.`);
}

async function* noBytes(): AsyncIterable<Uint8Array> {}

/**
 * C0 and C1 controls, DEL, and the invisible marks that reorder or hide displayed text (bidirectional
 * embeddings, overrides and isolates, U+200B–U+200F, U+2028/U+2029): `invoice\u202Efdp.exe` shows as
 * `invoiceexe.pdf` in a client's file list.
 */
// eslint-disable-next-line no-control-regex -- control characters are what this refuses
const UNSAFE_FILENAME_CHARACTER = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff/\\]/u;

function assertSafeFilename(filename: string): void {
  if (UNSAFE_FILENAME_CHARACTER.test(filename) || filename === '.' || filename === '..') {
    throw errors.validation([
      { field: 'querystring.filename', message: 'must be a file name: no path separators (/ \\), control characters or invisible text-direction marks' },
    ]);
  }
}
