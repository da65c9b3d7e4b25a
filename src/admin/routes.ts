import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import type { Clock } from '../clock.js';
import type { ApiKeyService } from '../keys/api-keys.js';
import type { Scopes } from '../keys/scopes.js';
import type { OrganizationService } from '../orgs/organizations.js';
import type { EventFeed } from '../events/feed.js';
import type { WebhookService } from '../webhooks/service.js';
import type { AdminService } from './service.js';
import { installDeliveryPages } from './delivery-routes.js';
import { AppError, errors } from '../errors.js';
import { toAppError } from '../http/errors.js';
import type { Organization } from '../orgs/organizations.js';
import type { SafeHtml } from './html.js';
import { TOKEN_PATTERN, emptyKeyForm, formOf, readKeyForm, resolveKeyExpiry, text } from './forms.js';
import { auditPage, errorPage, keysPage, organizationsPage, revokeConfirmPage, setupPage, signInPage, type KeysPageInput } from './pages.js';
import { ADMIN_PREFIX, installAdminSecurity } from './security.js';

export { ADMIN_PREFIX } from './security.js';

function send(reply: FastifyReply, status: number, page: SafeHtml): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(page.value);
}

/** Serves the stylesheet and the copy script from memory; finds the source folder from a build too. */
function readAsset(name: string): string {
  for (const folder of ['./public/', '../../src/admin/public/']) {
    try {
      return readFileSync(new URL(folder + name, import.meta.url), 'utf8');
    } catch {
      // try the next location
    }
  }
  throw new Error(`admin asset ${name} is missing`);
}

/**
 * The admin area: server-rendered pages under /admin for operators (sign-in, organizations, API
 * keys, webhook deliveries, the event log, the audit log). Form parsing, cookies and security headers are registered in this plugin's
 * own scope, so the JSON API keeps refusing form bodies (415) and sets no cookies.
 */
export interface AdminDeps {
  readonly admin: AdminService;
  readonly organizations: OrganizationService;
  readonly apiKeys: ApiKeyService;
  readonly config: Config;
  readonly scopes: Scopes;
  readonly clock: Clock;
  readonly webhooks: WebhookService;
  readonly events: EventFeed;
  /** The event types the event log's filter offers. */
  readonly eventTypes: readonly string[];
}

export function adminRoutes(context: AdminDeps): FastifyPluginAsync {
  const { admin, organizations, apiKeys, config, scopes } = context;
  const assets = {
    'admin.css': { body: readAsset('admin.css'), type: 'text/css; charset=utf-8' },
    'copy-key.js': { body: readAsset('copy-key.js'), type: 'text/javascript; charset=utf-8' },
  };

  return async (app: FastifyInstance) => {
    app.addHook('onRoute', (route) => {
      route.schema = { ...route.schema, hide: true };
    });
    const cookies = await installAdminSecurity(app, config, admin);

    app.setErrorHandler((error, request, reply) => {
      const appError = toAppError(error);
      if (!appError || appError.status >= 500) request.log.error({ err: error }, 'admin request failed');
      const status = appError?.status ?? 500;
      for (const [name, value] of Object.entries(appError?.extra.headers ?? {})) {
        if (name !== 'www-authenticate') reply.header(name, value);
      }
      const title = status === 401 ? 'Sign-in required' : status === 403 ? 'Request refused' : status === 404 ? 'Not found' : status === 500 ? 'Something went wrong' : 'Request not accepted';
      const message =
        status === 413 ? 'The form is larger than the admin area accepts (64 KiB).' : appError && status < 500 ? appError.detail : 'An unexpected error occurred. It has been logged.';
      return send(reply, status, errorPage({ session: request.adminSession, status, title, message, signInLink: status === 401 }));
    });

    // Each page reads a query parameter as one text; sent twice it would arrive as a list.
    app.addHook('preHandler', (request, _reply, done) => {
      const repeated = Object.entries((request.query ?? {}) as Record<string, unknown>).find(([, value]) => typeof value !== 'string');
      done(repeated ? errors.validation([{ field: `query.${repeated[0]}`, message: 'may appear once' }], `The query parameter "${repeated[0].slice(0, 40)}" may appear once.`) : undefined);
    });

    app.setNotFoundHandler((request, reply) =>
      send(reply, 404, errorPage({ status: 404, title: 'Not found', message: `There is no admin page at ${request.url.split('?')[0]}.` })),
    );

    // --- assets ----------------------------------------------------------------------------------

    app.get<{ Params: { name: string } }>('/assets/:name', { config: { adminAccess: 'asset' } }, async (request, reply) => {
      const asset = assets[request.params.name as keyof typeof assets];
      if (!Object.hasOwn(assets, request.params.name) || !asset) throw new AppError('not_found', 'No such asset.');
      reply.header('cache-control', 'no-cache');
      return reply.type(asset.type).send(asset.body);
    });

    // --- sign-in, sign-out, first-run setup -----------------------------------------------------------

    app.get('/', async (request, reply) => reply.redirect(`${ADMIN_PREFIX}/organizations`, 303));

    app.get('/login', { config: { adminAccess: 'public' } }, async (request, reply) => {
      if (request.adminSession) return reply.redirect(`${ADMIN_PREFIX}/organizations`, 303);
      return send(reply, 200, signInPage({ csrfToken: cookies.preSessionToken(request, reply) }));
    });

    app.post('/login', { config: { adminAccess: 'public' } }, async (request, reply) => {
      const form = formOf(request);
      const email = text(form, 'email');
      try {
        const { token } = await admin.signIn(email, text(form, 'password'), request.ip);
        if (request.adminSession) await admin.signOut(request.adminSession);
        cookies.setSession(request, reply, token);
        return reply.redirect(`${ADMIN_PREFIX}/organizations`, 303);
      } catch (error) {
        if (!(error instanceof AppError) || (error.status !== 401 && error.status !== 429)) throw error;
        for (const [name, value] of Object.entries(error.extra.headers ?? {})) reply.header(name, value);
        return send(reply, error.status, signInPage({ csrfToken: cookies.preSessionToken(request, reply), email, error: error.detail }));
      }
    });

    app.post('/logout', async (request, reply) => {
      await admin.signOut(request.adminSession!);
      cookies.clearSession(request, reply);
      return reply.redirect(`${ADMIN_PREFIX}/login`, 303);
    });

    const invalidSetupLink = () =>
      new AppError('not_found', 'This setup link is invalid, already used or expired. Restart the service to print a new one, or run `npx wo admin create-user --email …` in its directory.');

    app.get<{ Querystring: { token?: string } }>('/setup', { config: { adminAccess: 'public' } }, async (request, reply) => {
      const token = typeof request.query.token === 'string' ? request.query.token : '';
      if (!(await admin.isSetupTokenValid(token))) throw invalidSetupLink();
      return send(reply, 200, setupPage({ csrfToken: cookies.preSessionToken(request, reply), token }));
    });

    app.post('/setup', { config: { adminAccess: 'public' } }, async (request, reply) => {
      const form = formOf(request);
      const token = text(form, 'token');
      const email = text(form, 'email');
      if (!(await admin.isSetupTokenValid(token))) throw invalidSetupLink();
      try {
        await admin.completeSetup(token, email, text(form, 'password'));
      } catch (error) {
        if (error instanceof AppError && error.code === 'validation_failed') {
          const errors = Object.fromEntries((error.extra.errors ?? []).map((e) => [e.field, e.message]));
          return send(reply, 400, setupPage({ csrfToken: cookies.preSessionToken(request, reply), token, email, errors }));
        }
        if (error instanceof AppError && error.code === 'not_found') throw invalidSetupLink();
        throw error;
      }
      const { token: sessionToken } = await admin.signIn(email, text(form, 'password'), request.ip);
      cookies.setSession(request, reply, sessionToken);
      return reply.redirect(`${ADMIN_PREFIX}/organizations`, 303);
    });

    // --- organizations -------------------------------------------------------------------------

    const actorOf = (request: FastifyRequest) => ({ userId: request.adminSession!.userId, email: request.adminSession!.email });

    app.get<{ Querystring: { created?: string } }>('/organizations', async (request, reply) => {
      const all = await organizations.list();
      const created = all.find((org) => org.id === request.query.created);
      return send(reply, 200, organizationsPage({ session: request.adminSession!, organizations: all, created }));
    });

    app.post('/organizations', async (request, reply) => {
      const name = text(formOf(request), 'name');
      try {
        const org = await organizations.create(name);
        await admin.audit(actorOf(request), 'organization.created', { target: org.id, orgId: org.id, details: { name: org.name } });
        return reply.redirect(`${ADMIN_PREFIX}/organizations?created=${encodeURIComponent(org.id)}`, 303);
      } catch (error) {
        if (!(error instanceof AppError) || (error.code !== 'validation_failed' && error.code !== 'already_exists')) throw error;
        const message = error.extra.errors?.[0] ? `Name ${error.extra.errors[0].message}.` : error.detail;
        const page = organizationsPage({ session: request.adminSession!, organizations: await organizations.list(), name, error: message });
        return send(reply, error.status, page);
      }
    });

    // --- API keys --------------------------------------------------------------------------------

    const findOrganization = async (orgId: string): Promise<Organization> => {
      const org = await organizations.find(orgId);
      if (org.id !== orgId) throw new AppError('not_found', `Organization "${orgId}" was not found.`);
      return org;
    };

    installDeliveryPages(app, { admin, webhooks: context.webhooks, events: context.events, eventTypes: context.eventTypes, findOrganization, send });

    const renderKeys = async (
      reply: FastifyReply,
      status: number,
      request: FastifyRequest,
      org: Organization,
      extra: Partial<Pick<KeysPageInput, 'form' | 'createdKey' | 'message'>> = {},
    ) => {
      const [keys, audit] = await Promise.all([apiKeys.list(org.id), admin.listAudit(org.id, { limit: 20, offset: 0 })]);
      const page = keysPage({
        session: request.adminSession!,
        organization: org,
        keys,
        audit: audit.entries,
        auditTotal: audit.total,
        form: extra.form ?? emptyKeyForm(),
        scopes,
        createdKey: extra.createdKey,
        message: extra.message,
      });
      return send(reply, status, page);
    };

    app.get<{ Params: { orgId: string }; Querystring: { revoked?: string } }>('/organizations/:orgId/keys', async (request, reply) => {
      const org = await findOrganization(request.params.orgId);
      const revoked = request.query.revoked ? (await apiKeys.list(org.id)).find((k) => k.id === request.query.revoked) : undefined;
      return renderKeys(reply, 200, request, org, {
        message: revoked ? { kind: 'success', body: `API key “${revoked.name}” (${revoked.prefix}…) is revoked; requests with it now get 401.` } : undefined,
      });
    });

    app.post<{ Params: { orgId: string } }>('/organizations/:orgId/keys', async (request, reply) => {
      const org = await findOrganization(request.params.orgId);
      const form = readKeyForm(formOf(request), scopes);
      const submissionId = TOKEN_PATTERN.test(form.submissionId) ? form.submissionId : null;
      const alreadySubmitted = {
        kind: 'warning' as const,
        body: 'This form was already submitted, and the key it created was shown once then. Nothing new was created. If that key was not copied, revoke it and create another.',
      };

      const expiresAt = resolveKeyExpiry(form, context.clock);
      if (Object.keys(form.errors).length > 0) return renderKeys(reply, 400, request, org, { form });
      if (submissionId && (await admin.findSubmission(submissionId))) return renderKeys(reply, 409, request, org, { message: alreadySubmitted });

      let created;
      try {
        created = await admin.createApiKey(
          actorOf(request),
          { orgId: org.id, name: form.name, scopes: form.scopes, expiresAt, createdBy: `admin:${request.adminSession!.userId}` },
          submissionId,
        );
      } catch (error) {
        if (!(error instanceof AppError) || error.code !== 'validation_failed') throw error;
        for (const e of error.extra.errors ?? []) form.errors[e.field === 'expiresAt' ? 'expiresOn' : e.field] = e.message;
        return renderKeys(reply, 400, request, org, { form });
      }
      // The same form submitted twice at once: the first key stands, this submission created nothing.
      if (!created) return renderKeys(reply, 409, request, org, { message: alreadySubmitted });
      // @NOTE: the only place the key value is ever rendered: this response, never a URL or a redirect.
      return renderKeys(reply, 201, request, org, { createdKey: created });
    });

    app.get<{ Params: { orgId: string; keyId: string } }>('/organizations/:orgId/keys/:keyId/revoke', async (request, reply) => {
      const org = await findOrganization(request.params.orgId);
      const key = await apiKeys.get(request.params.keyId, org.id);
      return send(reply, 200, revokeConfirmPage({ session: request.adminSession!, organization: org, key }));
    });

    app.post<{ Params: { orgId: string; keyId: string } }>('/organizations/:orgId/keys/:keyId/revoke', async (request, reply) => {
      const org = await findOrganization(request.params.orgId);
      const before = await apiKeys.get(request.params.keyId, org.id);
      const key = await apiKeys.revoke(before.id, org.id);
      if (!before.revokedAt) {
        await admin.audit(actorOf(request), 'api_key.revoked', { target: key.id, orgId: org.id, details: { name: key.name, prefix: key.prefix } });
      }
      return reply.redirect(`${ADMIN_PREFIX}/organizations/${encodeURIComponent(org.id)}/keys?revoked=${encodeURIComponent(key.id)}`, 303);
    });

    // --- audit log ---------------------------------------------------------------------------------

    app.get<{ Querystring: { org?: string; offset?: string } }>('/audit', async (request, reply) => {
      const organization = request.query.org ? await findOrganization(request.query.org) : undefined;
      const offset = /^\d{1,9}$/.test(request.query.offset ?? '') ? Number(request.query.offset) : 0;
      const limit = 50;
      const { entries, total } = await admin.listAudit(organization?.id, { limit, offset });
      return send(reply, 200, auditPage({ session: request.adminSession!, entries, total, limit, offset, organization }));
    });
  };
}
