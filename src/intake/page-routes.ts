import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import QRCode from 'qrcode';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { sendProblem, toAppError } from '../http/errors.js';
import { acceptMultipart, isMultipart } from '../http/multipart.js';
import type { PageBudgets } from '../http/page-budgets.js';
import { pageSecurityHeaders } from '../admin/security.js';
import type { AttachmentService } from '../attachments/service.js';
import { findRecord } from '../records/repository.js';
import { findAsset } from '../assets/repository.js';
import { findLocation } from '../locations/repository.js';
import { sealedProofOf } from '../requests/repository.js';
import { intakePrincipal, type RequestService } from '../requests/service.js';
import type { IntakeLinksTable, WorkRequestsTable } from '../requests/tables.js';
import { INTAKE_PREFIX, type IntakeLinkService } from './links.js';
import type { ProofOfWork } from './proof-of-work.js';
import { formPage, statusPage, unavailablePage, type FormView, type StatusView } from './pages.js';
import { INTAKE_CSS, INTAKE_JS } from './assets.js';
import { readSubmission, RefusedSubmission, submissionLimits, type TypedValues } from './submission.js';

export { INTAKE_PREFIX };
const FORM_BODY_LIMIT_BYTES = 16 * 1024;
/** A JSON submission has no photos: its text fields only. (Multipart bodies are bounded by their own limits.) */
const JSON_BODY_LIMIT_BYTES = 64 * 1024;
const GONE = { title: 'This page does not exist', text: 'The link may have been replaced or switched off. Ask whoever put it up for the current one.' };

declare module 'fastify' {
  interface FastifyRequest {
    /** The intake link the request's token opened (the intake form's routes only). */
    intakeLink?: IntakeLinksTable | undefined;
  }
}

export interface IntakePageDeps {
  readonly db: Db;
  readonly config: Config;
  readonly errorsPageUrl: string;
  readonly links: IntakeLinkService;
  readonly budgets: PageBudgets;
  readonly proofOfWork: ProofOfWork;
  readonly requests: RequestService;
  readonly attachments: AttachmentService;
}

type TokenRequest = FastifyRequest<{ Params: { token: string } }>;

function send(reply: FastifyReply, status: number, page: string): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(page);
}

/** A client that sent JSON (or asks for it only) is answered problem+json; a browser, a page. */
function wantsJson(request: FastifyRequest): boolean {
  const type = request.headers['content-type']?.toLowerCase() ?? '';
  const accept = request.headers.accept?.toLowerCase() ?? '';
  return type.startsWith('application/json') || (accept.includes('json') && !accept.includes('text/html'));
}

/**
 * The public intake pages, no key: `/intake/{token}` (the form, and its POST), its QR code, and the
 * requester's status page `/intake/status/{statusToken}`. Server-rendered, phone-first, usable
 * without JavaScript except the proof-of-work, under the admin area's security headers.
 *
 * @NOTE: a submission spends the client address's budget before its token is looked at, then the
 * link's, both in `onRequest`, before its body is read: a flood past the budget costs one indexed
 * read per request and writes nothing. A token that opens nothing (unknown, rotated, disabled) gets
 * one 404 page that says nothing about which.
 */
export function intakePageRoutes(deps: IntakePageDeps): FastifyPluginAsync {
  const { links, budgets, requests, config } = deps;
  const limits = submissionLimits(config.attachments.maxBytes);

  const formView = async (link: IntakeLinksTable, token: string, extra: Pick<FormView, 'values' | 'message'> = {}): Promise<string> => {
    const [location, asset, challenge] = await Promise.all([
      link.location_id ? findLocation(deps.db, link.org_id, link.location_id) : undefined,
      link.asset_id ? findAsset(deps.db, link.org_id, link.asset_id) : undefined,
      deps.proofOfWork.challenge(link.id),
    ]);
    return formPage({ token, linkName: link.name, locationName: location?.name ?? null, assetName: asset?.name ?? null, challenge: Buffer.from(JSON.stringify(challenge)).toString('base64'), ...extra });
  };

  const statusView = async (request: WorkRequestsTable, statusToken: string, message?: StatusView['message']): Promise<string> => {
    const record = request.record_id ? await findRecord(deps.db, request.org_id, request.record_id) : undefined;
    const proof = record ? await sealedProofOf(deps.db, request.org_id, record.id) : undefined;
    return statusPage({
      statusToken,
      request,
      recordStatus: record?.status ?? null,
      proof: proof && { id: proof.id, statementDigest: proof.statement_digest, leafIndex: proof.leaf_index === null ? null : Number(proof.leaf_index), sealedAt: proof.sealed_at },
      ...(message ? { message } : {}),
    });
  };

  // A flood is answered this page again and again: rendered once per minute count (at most 15 of them).
  const tooManyPages = new Map<number, { detail: string; page: string }>();
  const tooMany = (request: FastifyRequest, reply: FastifyReply, seconds: number) => {
    reply.header('retry-after', String(seconds));
    const minutes = Math.ceil(seconds / 60);
    let answer = tooManyPages.get(minutes);
    if (!answer) {
      const detail = `Too many reports were sent from here or through this form. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`;
      answer = { detail, page: unavailablePage('Too many reports', detail) };
      if (tooManyPages.size < 100) tooManyPages.set(minutes, answer);
    }
    if (wantsJson(request)) return sendProblem(reply, new AppError('rate_limited', answer.detail), deps.errorsPageUrl);
    return send(reply, 429, answer.page);
  };

  /** Spends the address's budget, opens the link, spends the link's: before the body is read. */
  const openForSubmission = async (request: TokenRequest, reply: FastifyReply) => {
    const address = await budgets.spendForAddress(request.ip);
    if (!address.allowed) return tooMany(request, reply, address.retryAfterSeconds);
    const link = await links.open(request.params.token);
    if (!link) return notFound(request, reply);
    const spent = await budgets.spendForLink(link.id);
    if (!spent.allowed) return tooMany(request, reply, spent.retryAfterSeconds);
    request.intakeLink = link;
    return undefined;
  };

  const notFound = (request: FastifyRequest, reply: FastifyReply) =>
    wantsJson(request) ? sendProblem(reply, new AppError('not_found', 'No intake form is here.'), deps.errorsPageUrl) : send(reply, 404, unavailablePage(GONE.title, GONE.text));

  const refused = async (request: TokenRequest, reply: FastifyReply, error: AppError, values: TypedValues) => {
    for (const [name, value] of Object.entries(error.extra.headers ?? {})) reply.header(name, value);
    if (wantsJson(request)) return sendProblem(reply, error, deps.errorsPageUrl);
    const link = request.intakeLink!;
    return send(reply, error.status, await formView(link, request.params.token, { values, message: error.detail }));
  };

  return async (app: FastifyInstance) => {
    app.addHook('onRoute', (route) => {
      route.schema = { ...route.schema, hide: true };
    });
    await app.register(formbody, { bodyLimit: FORM_BODY_LIMIT_BYTES });
    await app.register(helmet, pageSecurityHeaders(config));
    await acceptMultipart(app, limits);
    app.addHook('onRequest', async (_request, reply) => {
      // The status page's URL is the requester's credential: never cached, indexed or sent on as a referrer.
      reply.header('cache-control', 'no-store');
      reply.header('x-robots-tag', 'noindex, nofollow');
    });

    app.setErrorHandler(async (error, request, reply) => {
      const appError = toAppError(error);
      const status = appError?.status ?? 500;
      if (status >= 500) request.log.error({ err: error }, 'intake page request failed');
      const answered = appError && status < 500 ? appError : new AppError('internal_error', 'Something went wrong on our side. Try again in a moment.');
      if (wantsJson(request)) return sendProblem(reply, answered, deps.errorsPageUrl);
      for (const [name, value] of Object.entries(answered.extra.headers ?? {})) reply.header(name, value);
      return send(reply, answered.status, unavailablePage(status === 404 ? GONE.title : 'Not accepted', status === 404 ? GONE.text : answered.detail));
    });
    app.setNotFoundHandler((request, reply) => notFound(request, reply));

    app.get<{ Params: { name: string } }>('/assets/:name', async (request, reply) => {
      const asset = request.params.name === 'intake.css' ? { body: INTAKE_CSS, type: 'text/css; charset=utf-8' } : request.params.name === 'intake.js' ? { body: INTAKE_JS, type: 'text/javascript; charset=utf-8' } : undefined;
      if (!asset) return notFound(request, reply);
      reply.header('cache-control', 'no-cache');
      return reply.type(asset.type).send(asset.body);
    });

    app.get<{ Params: { statusToken: string } }>('/status/:statusToken', async (request, reply) => {
      const found = await requests.byStatusToken(request.params.statusToken);
      if (!found) return notFound(request, reply);
      return send(reply, 200, await statusView(found, request.params.statusToken));
    });

    app.post<{ Params: { statusToken: string } }>('/status/:statusToken/cancel', async (request, reply) => {
      const address = await budgets.spendForAddress(request.ip);
      if (!address.allowed) return tooMany(request, reply, address.retryAfterSeconds);
      const found = await requests.byStatusToken(request.params.statusToken);
      if (!found) return notFound(request, reply);
      if (request.headers['sec-fetch-site'] === 'cross-site') throw new AppError('forbidden', 'This form can only be sent from your report’s own page.');
      if (found.status !== 'SUBMITTED') return send(reply, 409, await statusView(found, request.params.statusToken, { kind: 'error', text: 'The report was already decided, so it can no longer be cancelled here.' }));
      await requests.cancel(intakePrincipal({ id: found.intake_link_id ?? 'unknown', org_id: found.org_id }), found.id);
      return reply.redirect(`${INTAKE_PREFIX}/status/${request.params.statusToken}`, 303);
    });

    app.get<{ Params: { token: string } }>('/:token', async (request, reply) => {
      const link = await links.open(request.params.token);
      if (!link) return notFound(request, reply);
      return send(reply, 200, await formView(link, request.params.token));
    });

    app.get<{ Params: { token: string } }>('/:token/qr.svg', async (request, reply) => {
      const link = await links.open(request.params.token);
      if (!link) return notFound(request, reply);
      const svg = await QRCode.toString(links.formUrl(request.params.token), { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
      return reply.type('image/svg+xml').header('content-disposition', 'inline; filename="intake-qr.svg"').send(svg);
    });

    app.post<{ Params: { token: string } }>('/:token', { onRequest: openForSubmission, bodyLimit: JSON_BODY_LIMIT_BYTES }, async (request, reply) => {
      const link = request.intakeLink!;
      if (request.headers['sec-fetch-site'] === 'cross-site') return refused(request, reply, new AppError('forbidden', 'This form can only be sent from its own page.'), {});
      if (!isMultipart(request) && !wantsJson(request)) return refused(request, reply, new AppError('unsupported_media_type', 'Send the form as multipart/form-data, or as application/json.'), {});
      const requestId = newId('workRequest');
      let submission;
      try {
        submission = await readSubmission(request, link, requestId, { attachments: deps.attachments, proofOfWork: deps.proofOfWork, limits });
      } catch (error) {
        if (error instanceof RefusedSubmission) return refused(request, reply, error.cause, error.values);
        throw error;
      }
      const statusToken = `wrs_${randomBytes(32).toString('base64url')}`;
      try {
        await requests.fileThroughIntake(link, requestId, submission.fields, submission.photos, submission.solution, statusToken);
      } catch (error) {
        await Promise.all(submission.photos.map((photo) => deps.attachments.discard(photo)));
        const appError = toAppError(error);
        if (appError && appError.status < 500) return refused(request, reply, appError, submission.fields as unknown as TypedValues);
        throw error;
      }
      const statusUrl = `${INTAKE_PREFIX}/status/${statusToken}`;
      reply.code(303).header('location', statusUrl);
      return wantsJson(request) ? reply.send({ requestId, statusUrl: `${config.publicUrl}${statusUrl}` }) : reply.send();
    });
  };
}
