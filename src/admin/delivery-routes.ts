import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, errors } from '../errors.js';
import type { EventFeed, FeedSearch } from '../events/feed.js';
import type { Organization } from '../orgs/organizations.js';
import { DELIVERY_STATUSES, type Delivery } from '../webhooks/schemas.js';
import type { WebhookService } from '../webhooks/service.js';
import { eventsPage, type EventFilterForm } from './event-pages.js';
import type { SafeHtml } from './html.js';
import type { AdminService } from './service.js';
import { deliveryPage, webhookPage, webhooksPage } from './webhook-pages.js';

export interface DeliveryPagesDeps {
  readonly admin: AdminService;
  readonly webhooks: WebhookService;
  readonly events: EventFeed;
  readonly eventTypes: readonly string[];
  /** The organization a page's path names; 404 when there is none. */
  findOrganization(orgId: string): Promise<Organization>;
  send(reply: FastifyReply, status: number, page: SafeHtml): FastifyReply;
}

const SUBSCRIPTIONS_SHOWN = 20;
const DELIVERIES_PER_PAGE = 20;
const EVENTS_PER_PAGE = 50;
/** Ids are ours (`whk_…`, `dlv_…`, `evt_…`, `rec_…`): anything else cannot name one. */
const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const LOCAL_MINUTE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/;

function offsetOf(raw: string | undefined): number {
  return /^\d{1,9}$/.test(raw ?? '') ? Number(raw) : 0;
}

/** A path's id, or a 404 for one that cannot be any of ours (and would only make a useless query). */
function idOf(raw: string, what: string): string {
  if (!ID_PATTERN.test(raw)) throw errors.notFound(what);
  return raw;
}

/** A datetime-local value read as UTC; the round trip refuses dates that do not exist. */
function utcInstant(raw: string): string | undefined {
  if (!LOCAL_MINUTE.test(raw)) return undefined;
  const withSeconds = raw.length === 16 ? `${raw}:00` : raw;
  const at = new Date(`${withSeconds}.000Z`);
  return Number.isNaN(at.getTime()) || at.toISOString().slice(0, 19) !== withSeconds ? undefined : at.toISOString();
}

/** The event log's query as a search, with a message for each filter that cannot be used. */
function readEventFilters(query: Record<string, string | undefined>, orgId: string, eventTypes: readonly string[]): { form: EventFilterForm; search: FeedSearch } {
  const form: EventFilterForm = { type: query.type ?? '', id: (query.id ?? '').trim(), from: query.from ?? '', to: query.to ?? '', errors: {} };
  const search: FeedSearch = { orgId };
  if (form.type !== '') {
    if (eventTypes.includes(form.type)) search.type = form.type;
    else form.errors.type = 'Choose one of the listed event types.';
  }
  if (form.id !== '') {
    if (ID_PATTERN.test(form.id)) search.id = form.id;
    else form.errors.id = 'An id has letters, digits, “_” and “-” only, at most 64 of them.';
  }
  for (const bound of ['from', 'to'] as const) {
    if (form[bound] === '') continue;
    const instant = utcInstant(form[bound]);
    if (instant) search[bound] = instant;
    else form.errors[bound] = 'Give a date and a time (UTC), or leave it empty.';
  }
  if (search.from && search.to && search.from >= search.to) form.errors.to = 'Must be later than “From”.';
  return { form, search };
}

/**
 * The admin area's pages of an organization's webhook subscriptions, deliveries and event log,
 * registered inside the admin plugin (its session guard and CSRF checks apply). Every page and the
 * redeliver form go through the organization named in the path: another organization's
 * subscription, delivery or event is not found there (404).
 */
export function installDeliveryPages(app: FastifyInstance, deps: DeliveryPagesDeps): void {
  const { admin, webhooks, events, findOrganization, send } = deps;
  const actorOf = (request: FastifyRequest) => ({ userId: request.adminSession!.userId, email: request.adminSession!.email });

  app.get<{ Params: { orgId: string } }>('/organizations/:orgId/webhooks', async (request, reply) => {
    const org = await findOrganization(request.params.orgId);
    const { webhooks: list, total } = await webhooks.list(org.id, { limit: SUBSCRIPTIONS_SHOWN, offset: 0 });
    const withStats = await Promise.all(list.map(async (webhook) => ({ webhook, stats: await webhooks.deliveryStats(org.id, webhook.id) })));
    return send(reply, 200, webhooksPage({ session: request.adminSession!, organization: org, webhooks: withStats, total }));
  });

  app.get<{ Params: { orgId: string; webhookId: string }; Querystring: { status?: string; offset?: string } }>('/organizations/:orgId/webhooks/:webhookId', async (request, reply) => {
    const org = await findOrganization(request.params.orgId);
    const webhookId = idOf(request.params.webhookId, `Webhook subscription "${request.params.webhookId.slice(0, 64)}"`);
    const rawStatus = request.query.status ?? '';
    if (rawStatus !== '' && !(DELIVERY_STATUSES as readonly string[]).includes(rawStatus)) {
      throw errors.validation([{ field: 'query.status', message: `must be one of ${DELIVERY_STATUSES.join(', ')}` }], 'Choose a listed delivery status.');
    }
    const status = rawStatus === '' ? undefined : (rawStatus as Delivery['status']);
    const webhook = await webhooks.get(org.id, webhookId);
    const offset = offsetOf(request.query.offset);
    const [stats, { deliveries, total }] = await Promise.all([
      webhooks.deliveryStats(org.id, webhook.id),
      webhooks.listDeliveries(org.id, webhook.id, status, { limit: DELIVERIES_PER_PAGE, offset }),
    ]);
    return send(reply, 200, webhookPage({ session: request.adminSession!, organization: org, webhook, stats, deliveries, total, limit: DELIVERIES_PER_PAGE, offset, status }));
  });

  type DeliveryRoute = { Params: { orgId: string; webhookId: string; deliveryId: string }; Querystring: { redeliveredFrom?: string } };
  const findDelivery = async (request: FastifyRequest<DeliveryRoute>) => {
    const org = await findOrganization(request.params.orgId);
    const webhookId = idOf(request.params.webhookId, `Webhook subscription "${request.params.webhookId.slice(0, 64)}"`);
    const deliveryId = idOf(request.params.deliveryId, `Delivery "${request.params.deliveryId.slice(0, 64)}"`);
    const webhook = await webhooks.get(org.id, webhookId);
    return { org, webhook, delivery: await webhooks.getDelivery(org.id, webhook.id, deliveryId) };
  };

  app.get<DeliveryRoute>('/organizations/:orgId/webhooks/:webhookId/deliveries/:deliveryId', async (request, reply) => {
    const { org, webhook, delivery } = await findDelivery(request);
    const from = request.query.redeliveredFrom;
    const message =
      from && ID_PATTERN.test(from)
        ? { kind: 'success' as const, body: `Redelivery queued: this new delivery sends event ${delivery.eventId} again (from delivery ${from}), with the same X-Webhook-Id and body.` }
        : undefined;
    return send(reply, 200, deliveryPage({ session: request.adminSession!, organization: org, webhook, delivery, message }));
  });

  app.post<DeliveryRoute>('/organizations/:orgId/webhooks/:webhookId/deliveries/:deliveryId/redeliver', async (request, reply) => {
    const { org, webhook, delivery } = await findDelivery(request);
    let created: Delivery;
    try {
      // The API's own redelivery (POST /api/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver).
      created = await webhooks.redeliver(org.id, webhook.id, delivery.id);
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== 'conflict') throw error;
      return send(reply, 409, deliveryPage({ session: request.adminSession!, organization: org, webhook, delivery, message: { kind: 'error', body: error.detail } }));
    }
    await admin.audit(actorOf(request), 'webhook_delivery.redelivered', {
      target: created.id,
      orgId: org.id,
      details: { webhookId: webhook.id, fromDeliveryId: delivery.id, event: created.event, eventId: created.eventId },
    });
    const base = `/admin/organizations/${encodeURIComponent(org.id)}/webhooks/${encodeURIComponent(webhook.id)}`;
    return reply.redirect(`${base}/deliveries/${encodeURIComponent(created.id)}?redeliveredFrom=${encodeURIComponent(delivery.id)}`, 303);
  });

  app.get<{ Params: { orgId: string }; Querystring: Record<string, string | undefined> }>('/organizations/:orgId/events', async (request, reply) => {
    const org = await findOrganization(request.params.orgId);
    const { form, search } = readEventFilters(request.query, org.id, deps.eventTypes);
    const offset = offsetOf(request.query.offset);
    const invalid = Object.keys(form.errors).length > 0;
    const found = invalid ? { events: [], total: 0 } : await events.search(search, { limit: EVENTS_PER_PAGE, offset });
    const page = eventsPage({ session: request.adminSession!, organization: org, form, eventTypes: deps.eventTypes, events: found.events, total: found.total, limit: EVENTS_PER_PAGE, offset });
    return send(reply, invalid ? 400 : 200, page);
  });
}
