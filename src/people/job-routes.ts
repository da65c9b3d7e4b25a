import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import { AppError, errors } from '../errors.js';
import { toAppError } from '../http/errors.js';
import { pageSecurityHeaders } from '../admin/security.js';
import type { RecordService } from '../records/service.js';
import { toWorkOrder } from '../records/repository.js';
import type { CommentService } from '../comments/service.js';
import type { ChecklistService } from '../checklists/service.js';
import { answerFromForm } from './job-checklists.js';
import type { AttachmentService, ReceivedUpload, Upload } from '../attachments/service.js';
import { acceptMultipart, formParts, isMultipart, type MultipartLimits } from '../http/multipart.js';
import type { AccessLinkService, OpenedLink } from './access-links.js';
import type { PageBudgets } from '../http/page-budgets.js';
import { FINAL_STATUSES, jobPage, unavailablePage, type JobView } from './job-page.js';
import { JOB_CSS, JOB_JS } from './job-assets.js';
import { commentsThroughLink, imagesOfRecord, placeNames } from './job-repository.js';

export const JOB_PREFIX = '/job';
const FORM_BODY_LIMIT_BYTES = 64 * 1024;
const PHOTO_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'image/heic', 'image/heif'];
const MAX_PHOTOS_SHOWN = 100;
/** The photo form sent without the page's script: a few photos per submit, nothing else of size. */
const PHOTO_FORM = { maxFiles: 10, maxFields: 5, maxFieldBytes: 1024 } as const;

declare module 'fastify' {
  interface FastifyRequest {
    /** The access link the request's token opened (the job page's routes only). */
    jobLink?: OpenedLink | undefined;
  }
}

export interface JobPageDeps {
  readonly db: Db;
  readonly config: Config;
  readonly links: AccessLinkService;
  readonly budgets: PageBudgets;
  readonly records: RecordService;
  readonly comments: CommentService;
  readonly attachments: AttachmentService;
  /** The checklists feature is built after this one: its service is found when a request needs it. */
  readonly checklists: () => ChecklistService;
}

type TokenRequest = FastifyRequest<{ Params: { token: string } }>;

const GONE = { title: 'This link does not work', text: 'It may have expired or been withdrawn. Ask whoever sent it to you for a new one.' };

function send(reply: FastifyReply, status: number, page: string): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(page);
}

function field(body: unknown, name: string): string | string[] | undefined {
  const value = body !== null && typeof body === 'object' ? (body as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' || Array.isArray(value) ? (value as string | string[]) : undefined;
}

/** A note or the resolution notes from a form: 1 to 5,000 characters, not blank. */
function textField(body: unknown, name: string, what: string): string {
  const value = field(body, name);
  const text = typeof value === 'string' ? value.trim() : '';
  if (text.length === 0 || text.length > 5000) throw errors.validation([{ field: `body.${name}`, message: `${what} must be 1 to 5,000 characters` }], `Write ${what.toLowerCase()} first (at most 5,000 characters).`);
  return text;
}

/**
 * The job page: `/job/{token}`, a phone-first, server-rendered page of one work order for the vendor
 * or person its access link was made for. Actions post forms (no JavaScript needed), except photo
 * uploads, which the page's script sends as raw bodies through the attachment path.
 *
 * @NOTE: the token in the path is the only credential: there is no cookie, so a cross-site form
 * cannot act for anyone who has not handed over their URL (cross-site posts are refused anyway). Every
 * request spends the client address's budget before the token is looked at, then the link's; a link
 * that does not open (unknown, expired, revoked, holder gone) gets one 404 page that says nothing
 * about which. No URL of the page takes another id than the link's own work order's files.
 */
export function jobPageRoutes(deps: JobPageDeps): FastifyPluginAsync {
  const { links, budgets, records, comments, attachments, config } = deps;
  const uploads = new WeakMap<FastifyRequest, Readable>();
  const photoForm: MultipartLimits = { ...PHOTO_FORM, maxFileBytes: config.attachments.maxBytes };

  const view = async (opened: OpenedLink, token: string, message?: JobView['message']): Promise<string> => {
    const record = toWorkOrder(opened.record);
    const { orgId } = opened.principal;
    const [places, photos, notes, checklists] = await Promise.all([
      placeNames(deps.db, orgId, record.assetId, record.locationId),
      imagesOfRecord(deps.db, orgId, record.id, MAX_PHOTOS_SHOWN),
      commentsThroughLink(deps.db, orgId, record.id, opened.link.id),
      record.checklists.length ? deps.checklists().ofRecord(orgId, record.id) : [],
    ]);
    return jobPage({ token, holderName: opened.holderName, record, ...places, photos, notes, checklists, ...(message ? { message } : {}) });
  };

  /** Spends the budgets, opens the link; refuses cross-site writes and any write once the job is finished. */
  const openLink = async (request: TokenRequest, reply: FastifyReply) => {
    const address = await budgets.spendForAddress(request.ip);
    if (!address.allowed) return tooMany(reply, address.retryAfterSeconds);
    const opened = await links.open(request.params.token);
    if (!opened) return send(reply, 404, unavailablePage(GONE.title, GONE.text));
    const link = await budgets.spendForLink(opened.link.id);
    if (!link.allowed) return tooMany(reply, link.retryAfterSeconds);
    request.jobLink = opened;
    if (request.method === 'POST') {
      if (request.headers['sec-fetch-site'] === 'cross-site') throw new AppError('forbidden', 'This form can only be sent from the job page itself.');
      if (FINAL_STATUSES.has(opened.record.status)) throw errors.conflict('This job is finished: nothing more can be changed through this link.');
    }
    return undefined;
  };

  const tooMany = (reply: FastifyReply, seconds: number) => {
    reply.header('retry-after', String(seconds));
    return send(reply, 429, unavailablePage('Too many requests', `This page was asked for too often. Try again in ${Math.ceil(seconds / 60)} minute${seconds > 60 ? 's' : ''}.`));
  };

  /** After an action: back to the page (303), so that reloading it sends nothing again. */
  const done = async (request: TokenRequest, reply: FastifyReply) => {
    await links.noteUse(request.jobLink!.link);
    return reply.redirect(`${JOB_PREFIX}/${request.params.token}`, 303);
  };

  return async (app: FastifyInstance) => {
    app.addHook('onRoute', (route) => {
      route.schema = { ...route.schema, hide: true };
    });
    await app.register(formbody, { bodyLimit: FORM_BODY_LIMIT_BYTES });
    await app.register(helmet, pageSecurityHeaders(config));
    await acceptMultipart(app, photoForm);
    // Photos arrive as the raw body, streamed to the attachment path as they come (never buffered).
    app.addContentTypeParser(PHOTO_TYPES, (request, payload, next) => {
      uploads.set(request, payload as Readable);
      next(null, undefined);
    });
    app.addHook('onRequest', async (_request, reply) => {
      // The URL is the credential: never cached, never indexed, never sent on as a referrer (helmet).
      reply.header('cache-control', 'no-store');
      reply.header('x-robots-tag', 'noindex, nofollow');
    });

    app.setErrorHandler(async (error, request, reply) => {
      const appError = toAppError(error);
      const status = appError?.status ?? 500;
      if (status >= 500) request.log.error({ err: error }, 'job page request failed');
      for (const [name, value] of Object.entries(appError?.extra.headers ?? {})) reply.header(name, value);
      const text =
        status === 415 && request.url.split('?')[0]!.endsWith('/photos')
          ? 'Photos are sent by the page’s script: allow JavaScript for this page, or send them as JPEG, PNG, WebP or HEIC.'
          : appError && status < 500
            ? appError.detail
            : 'Something went wrong on our side. Try again in a moment.';
      // The page's script sends photos one by one and shows the answer's message; a form gets the page.
      if (request.method === 'POST' && request.url.split('?')[0]!.endsWith('/photos') && !isMultipart(request)) return reply.code(status).send({ message: text });
      const opened = request.jobLink;
      const token = (request.params as { token?: string } | undefined)?.token;
      // Another id than the link's own, in any URL form, is the same 404 page as a link that does not work.
      if (opened && token && status < 500 && status !== 404) {
        const fresh = (await links.open(token)) ?? opened;
        return send(reply, status, await view(fresh, token, { kind: 'error', text }));
      }
      return send(reply, status, unavailablePage(status === 404 ? GONE.title : 'Request not accepted', status === 404 ? GONE.text : text));
    });
    app.setNotFoundHandler((_request, reply) => send(reply, 404, unavailablePage(GONE.title, GONE.text)));

    app.get<{ Params: { name: string } }>('/assets/:name', async (request, reply) => {
      const asset = request.params.name === 'job.css' ? { body: JOB_CSS, type: 'text/css; charset=utf-8' } : request.params.name === 'job.js' ? { body: JOB_JS, type: 'text/javascript; charset=utf-8' } : undefined;
      if (!asset) return send(reply, 404, unavailablePage(GONE.title, GONE.text));
      reply.header('cache-control', 'no-cache');
      return reply.type(asset.type).send(asset.body);
    });

    app.get<{ Params: { token: string } }>('/:token', { preHandler: openLink }, async (request, reply) => send(reply, 200, await view(request.jobLink!, request.params.token)));

    app.post<{ Params: { token: string } }>('/:token/start', { preHandler: openLink }, async (request, reply) => {
      const { principal, record } = request.jobLink!;
      await records.act(principal, record.id, record.status === 'ON_HOLD' ? 'resume' : 'start', {});
      return done(request, reply);
    });

    app.post<{ Params: { token: string } }>('/:token/comments', { preHandler: openLink }, async (request, reply) => {
      const { principal, record } = request.jobLink!;
      await comments.add(principal, record.id, { body: textField(request.body, 'body', 'The note') });
      return done(request, reply);
    });

    app.post<{ Params: { token: string }; Querystring: { filename?: string } }>('/:token/photos', { preHandler: openLink, bodyLimit: config.attachments.maxBytes }, async (request, reply) => {
      const { principal, record } = request.jobLink!;
      const store = async (upload: Upload) => {
        const received = await attachments.receive(principal, record.id, upload);
        try {
          return await attachments.store(principal, received);
        } catch (error) {
          await attachments.discard(received);
          throw error;
        }
      };
      // Without the page's script, the browser sends the form itself: every chosen photo in one body.
      if (isMultipart(request)) {
        // All or nothing: every photo is received (checked, not yet visible) before any is stored.
        const received: ReceivedUpload[] = [];
        try {
          for await (const part of formParts(request, photoForm)) {
            if (part.kind !== 'file') continue;
            if (part.filename === '') {
              for await (const _ of part.bytes); // the empty part a browser sends when no file was chosen
              continue;
            }
            received.push(await attachments.receive(principal, record.id, { filename: part.filename.slice(0, 255), contentType: part.mediaType, contentLength: undefined, body: part.bytes }));
          }
          if (received.length === 0) throw errors.validation([{ field: 'body.photo', message: 'no photo was chosen' }], 'Choose one or more photos first.');
        } catch (error) {
          await Promise.all(received.map((upload) => attachments.discard(upload)));
          throw error;
        }
        for (const [n, upload] of received.entries()) {
          await attachments.store(principal, upload).catch(async (error: unknown) => {
            await Promise.all(received.slice(n).map((rest) => attachments.discard(rest)));
            throw error;
          });
        }
        return done(request, reply);
      }
      const filename = typeof request.query.filename === 'string' && request.query.filename.trim() ? request.query.filename.trim().slice(0, 255) : 'photo.jpg';
      const stream = uploads.get(request);
      const length = request.headers['content-length'];
      const attachment = await store({
        filename,
        contentType: request.headers['content-type'],
        contentLength: length === undefined ? undefined : Number(length),
        body: stream ? bytesOf(stream) : undefined,
      });
      await links.noteUse(request.jobLink!.link);
      return reply.code(201).send({ id: attachment.id, filename: attachment.filename });
    });

    // The same answer as PUT /records/{id}/checklists/{checklistId}/items/{key}, through the same checks, by the link.
    app.post<{ Params: { token: string; checklistId: string; key: string } }>('/:token/checklists/:checklistId/items/:key', { preHandler: openLink }, async (request, reply) => {
      const { principal, record } = request.jobLink!;
      const checklists = deps.checklists();
      const given = (await checklists.ofRecord(principal.orgId, record.id)).find((checklist) => checklist.checklistId === request.params.checklistId);
      const item = given?.items.find((candidate) => candidate.key === request.params.key);
      if (!item) throw errors.notFound('Checklist item');
      await checklists.answer(principal, record.id, request.params.checklistId, item.key, answerFromForm(item, request.body));
      return done(request, reply);
    });

    app.post<{ Params: { token: string } }>('/:token/complete', { preHandler: openLink }, async (request, reply) => {
      const { principal, record } = request.jobLink!;
      const chosen = field(request.body, 'evidence');
      const evidence = (chosen === undefined ? [] : Array.isArray(chosen) ? chosen : [chosen]).map((attachmentId) => ({ attachmentId }));
      await records.act(principal, record.id, 'complete', { resolutionNotes: textField(request.body, 'resolutionNotes', 'What was done'), ...(evidence.length ? { evidence } : {}) });
      return done(request, reply);
    });

    // A photo of this work order only: any other id, of any work order or organization, is the 404 page.
    app.get<{ Params: { token: string; attachmentId: string } }>('/:token/photos/:attachmentId', { preHandler: openLink }, async (request, reply) => {
      const { principal, record } = request.jobLink!;
      const { attachment, read } = await attachments.openContent(principal.orgId, record.id, request.params.attachmentId);
      if (!attachment.mediaType.startsWith('image/')) throw errors.notFound('Photo');
      reply.headers({ 'content-type': attachment.mediaType, 'content-length': attachment.size, 'x-content-type-options': 'nosniff', 'content-security-policy': "default-src 'none'; sandbox" });
      return reply.send(Readable.from(read(0, attachment.size - 1), { objectMode: false, highWaterMark: 1 }));
    });
  };
}

/** The upload's bytes; a client that goes away mid-body ends it. */
async function* bytesOf(stream: Readable): AsyncIterable<Uint8Array> {
  try {
    for await (const piece of stream.iterator({ destroyOnReturn: false })) yield piece as Uint8Array;
  } catch {
    throw new AppError('malformed_request', 'The upload was cut off before the whole photo arrived.', { headers: { connection: 'close' } });
  }
}
