import type { Organization } from '../orgs/organizations.js';
import { PING_EVENT, type Delivery, type Webhook } from '../webhooks/schemas.js';
import type { DeliveryStats } from '../webhooks/service.js';
import { deliveryChart } from './delivery-chart.js';
import { html, type HtmlValue, type SafeHtml } from './html.js';
import { csrfField, layout, notice, organizationNav, time } from './pages.js';
import type { AdminSession } from './service.js';

/** The admin area's pages of an organization's webhook subscriptions, their deliveries and attempts. */

type Attempt = Delivery['attempts'][number];

const STATUS_LABELS: Record<Delivery['status'], string> = { pending: 'Pending', delivering: 'Sending', succeeded: 'Succeeded', failed: 'Failed' };

/** Characters of an answer shown in a list; the delivery's own page shows all that was kept. */
const EXCERPT_IN_LIST = 80;

function webhooksBase(org: Organization): string {
  return `/admin/organizations/${org.id}/webhooks`;
}

function breadcrumb(org: Organization, trail: { href?: string; label: HtmlValue }[]): SafeHtml {
  return html`<nav aria-label="Breadcrumb" class="breadcrumb"><ol><li><a href="/admin/organizations">Organizations</a></li><li><a href="/admin/organizations/${org.id}/keys">${org.name}</a></li>${trail.map((step) =>
    step.href ? html`<li><a href="${step.href}">${step.label}</a></li>` : html`<li aria-current="page">${step.label}</li>`,
  )}</ol></nav>`;
}

function statusBadge(status: Delivery['status']): SafeHtml {
  return html`<span class="state state-${status}">${STATUS_LABELS[status]}</span>`;
}

/** What the receiver answered: its HTTP status, or why there was none. */
function answerOf(attempt: Attempt): string {
  if (attempt.statusCode !== null) return `HTTP ${attempt.statusCode}`;
  return attempt.error ?? 'no answer';
}

function attemptSummary(attempt: Attempt): SafeHtml {
  const excerpt = attempt.responseExcerpt;
  const shown = excerpt && excerpt.length > EXCERPT_IN_LIST ? `${excerpt.slice(0, EXCERPT_IN_LIST)}…` : excerpt;
  return html`<li><span class="attempt-head">#${attempt.attempt} ${answerOf(attempt)}, ${attempt.durationMs} ms,</span> ${time(attempt.startedAt)}${shown ? html`<br><code class="excerpt-inline">${shown}</code>` : html``}</li>`;
}

function activeBadge(webhook: Webhook): SafeHtml {
  return webhook.active ? html`<span class="state state-active">Active</span>` : html`<span class="state state-revoked">Inactive</span>`;
}

function subscriptionFacts(webhook: Webhook): SafeHtml {
  return html`<dl class="facts">
    <dt>URL</dt><dd><code class="wrap">${webhook.url}</code></dd>
    <dt>Events</dt><dd>${webhook.events.map((event, i) => html`${i > 0 ? ', ' : ''}<code>${event}</code>`)}</dd>
    <dt>State</dt><dd>${activeBadge(webhook)}</dd>
    <dt>Id</dt><dd><code>${webhook.id}</code></dd>
    <dt>Created</dt><dd>${time(webhook.createdAt)}</dd>
  </dl>`;
}

export function webhooksPage(input: { session: AdminSession; organization: Organization; webhooks: { webhook: Webhook; stats: DeliveryStats }[]; total: number }): SafeHtml {
  const { organization: org } = input;
  const shown = input.webhooks.length;
  return layout({
    title: `Webhooks of ${org.name}`,
    session: input.session,
    current: 'organizations',
    main: html`${breadcrumb(org, [{ label: 'Webhooks' }])}
<h1>Webhooks <span class="subtitle">of ${org.name}</span></h1>
${organizationNav(org.id, 'webhooks')}
<p>The organization’s webhook subscriptions (created through the API, <code>POST /api/v1/webhooks</code>), each with its last 24 hours of delivery attempts. Open one for its deliveries, their attempts and redelivery.</p>
<h2 id="webhook-list-title">Subscriptions <span class="count">(${input.total})</span></h2>
${
  shown === 0
    ? html`<p>This organization has no webhook subscriptions.</p>`
    : html`${input.webhooks.map(
        ({ webhook, stats }) => html`<section class="panel" aria-labelledby="${webhook.id}-title">
  <h3 id="${webhook.id}-title"><a href="${webhooksBase(org)}/${webhook.id}">${webhook.name}</a></h3>
  ${subscriptionFacts(webhook)}
  ${deliveryChart(stats, webhook.id, webhook.name)}
</section>`,
      )}
${input.total > shown ? html`<p>The ${shown} newest of ${input.total} subscriptions are shown.</p>` : html``}`
}`,
  });
}

function deliveryRow(org: Organization, webhook: Webhook, delivery: Delivery): SafeHtml {
  const href = `${webhooksBase(org)}/${webhook.id}/deliveries/${delivery.id}`;
  return html`<tr>
    <td>${time(delivery.createdAt)}</td>
    <th scope="row"><a href="${href}"><code>${delivery.event}</code><span class="visually-hidden"> delivery ${delivery.id}</span></a><br><small><code>${delivery.eventId}</code></small></th>
    <td>${statusBadge(delivery.status)}${delivery.status === 'pending' && delivery.nextAttemptAt ? html`<br><small>next ${time(delivery.nextAttemptAt)}</small>` : html``}</td>
    <td>${delivery.attempts.length === 0 ? html`<span class="muted">none yet</span>` : html`<ol class="attempt-list">${delivery.attempts.map(attemptSummary)}</ol>`}</td>
  </tr>`;
}

export interface WebhookPageInput {
  session: AdminSession;
  organization: Organization;
  webhook: Webhook;
  stats: DeliveryStats;
  deliveries: Delivery[];
  total: number;
  limit: number;
  offset: number;
  status: Delivery['status'] | undefined;
}

export function webhookPage(input: WebhookPageInput): SafeHtml {
  const { organization: org, webhook } = input;
  const base = `${webhooksBase(org)}/${webhook.id}`;
  const query = (offset: number) => `${base}?${input.status ? `status=${input.status}&` : ''}offset=${offset}`;
  const previous = input.offset > 0 ? Math.max(0, input.offset - input.limit) : undefined;
  const next = input.offset + input.limit < input.total ? input.offset + input.limit : undefined;
  const statusOptions = (['', 'pending', 'delivering', 'succeeded', 'failed'] as const).map(
    (value) => html`<option value="${value}"${(input.status ?? '') === value ? html` selected` : html``}>${value === '' ? 'All' : STATUS_LABELS[value]}</option>`,
  );
  return layout({
    title: `Webhook ${webhook.name}`,
    session: input.session,
    current: 'organizations',
    main: html`${breadcrumb(org, [{ href: webhooksBase(org), label: 'Webhooks' }, { label: webhook.name }])}
<h1>Webhook “${webhook.name}” <span class="subtitle">of ${org.name}</span></h1>
${organizationNav(org.id, 'webhooks')}
${subscriptionFacts(webhook)}
<section aria-labelledby="chart-title">
  <h2 id="chart-title">Last 24 hours</h2>
  ${deliveryChart(input.stats, webhook.id, webhook.name)}
</section>
<section>
  <h2 id="delivery-list-title">Deliveries <span class="count">(${input.total})</span></h2>
  <form method="get" action="${base}" class="inline-form filters">
    <div class="field">
      <label for="delivery-status">Status</label>
      <select id="delivery-status" name="status">${statusOptions}</select>
    </div>
    <button type="submit">Show</button>
  </form>
  ${
    input.deliveries.length === 0
      ? html`<p>No deliveries${input.status ? html` in this state` : html``}.</p>`
      : html`<div class="table-wrap" role="region" aria-labelledby="delivery-list-title" tabindex="0">
  <table class="deliveries">
    <thead><tr><th scope="col">Created</th><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts: answer, latency, time, first bytes</th></tr></thead>
    <tbody>${input.deliveries.map((delivery) => deliveryRow(org, webhook, delivery))}</tbody>
  </table>
  </div>`
  }
  <nav aria-label="Pages of deliveries" class="pager">
    <p>Deliveries ${input.total === 0 ? 0 : input.offset + 1}–${input.offset + input.deliveries.length} of ${input.total}, newest first</p>
    ${previous !== undefined ? html`<a href="${query(previous)}" rel="prev">Newer</a>` : html``}
    ${next !== undefined ? html`<a href="${query(next)}" rel="next">Older</a>` : html``}
  </nav>
</section>`,
  });
}

export interface DeliveryPageInput {
  session: AdminSession;
  organization: Organization;
  webhook: Webhook;
  delivery: Delivery;
  message?: { kind: 'success' | 'error' | 'warning'; body: HtmlValue } | undefined;
}

function attemptRow(attempt: Attempt): SafeHtml {
  return html`<tr>
    <th scope="row">#${attempt.attempt}</th>
    <td>${time(attempt.startedAt)}<br><small><code>${attempt.startedAt}</code></small></td>
    <td>${attempt.statusCode !== null ? html`HTTP ${attempt.statusCode}` : html`<span class="muted">no answer</span>`}</td>
    <td>${attempt.durationMs} ms</td>
    <td>${attempt.error ?? html`<span class="muted">—</span>`}</td>
    <td>${attempt.responseExcerpt ? html`<pre class="excerpt">${attempt.responseExcerpt}</pre>` : html`<span class="muted">empty</span>`}</td>
  </tr>`;
}

export function deliveryPage(input: DeliveryPageInput): SafeHtml {
  const { organization: org, webhook, delivery } = input;
  const base = `${webhooksBase(org)}/${webhook.id}`;
  const here = `${base}/deliveries/${delivery.id}`;
  const finished = delivery.status === 'succeeded' || delivery.status === 'failed';
  return layout({
    title: `Delivery ${delivery.id}`,
    session: input.session,
    current: 'organizations',
    main: html`${breadcrumb(org, [{ href: webhooksBase(org), label: 'Webhooks' }, { href: base, label: webhook.name }, { label: html`Delivery <code>${delivery.id}</code>` }])}
<h1>Delivery of <code>${delivery.event}</code> <span class="subtitle">to “${webhook.name}”</span></h1>
${organizationNav(org.id, 'webhooks')}
${input.message ? notice(input.message.kind, input.message.body) : html``}
<dl class="facts">
  <dt>Status</dt><dd>${statusBadge(delivery.status)}</dd>
  <dt>Event id</dt><dd><code>${delivery.eventId}</code> (sent as <code>X-Webhook-Id</code>)${
    delivery.event === PING_EVENT ? html`` : html` · <a href="/admin/organizations/${org.id}/events?id=${delivery.eventId}">Find it in the event log</a>`
  }</dd>
  <dt>Created</dt><dd>${time(delivery.createdAt)}</dd>
  <dt>Attempts</dt><dd>${delivery.attemptCount}</dd>
  ${delivery.status === 'pending' && delivery.nextAttemptAt ? html`<dt>Next attempt</dt><dd>${time(delivery.nextAttemptAt)}</dd>` : html``}
  ${delivery.completedAt ? html`<dt>Finished</dt><dd>${time(delivery.completedAt)}</dd>` : html``}
  <dt>Delivery id</dt><dd><code>${delivery.id}</code></dd>
</dl>
<section>
  <h2 id="attempt-list-title">Attempts <span class="count">(${delivery.attempts.length})</span></h2>
  ${
    delivery.attempts.length === 0
      ? html`<p>No attempt yet. <a href="${here}">Reload</a> to see it once a worker has sent it.</p>`
      : html`<div class="table-wrap" role="region" aria-labelledby="attempt-list-title" tabindex="0">
  <table class="attempts">
    <thead><tr><th scope="col">Attempt</th><th scope="col">Started</th><th scope="col">Answer</th><th scope="col">Latency</th><th scope="col">Error</th><th scope="col">First bytes of the answer</th></tr></thead>
    <tbody>${delivery.attempts.map(attemptRow)}</tbody>
  </table>
  </div>`
  }
</section>
<section aria-labelledby="redeliver-title" class="panel">
  <h2 id="redeliver-title">Redeliver</h2>
  ${
    finished
      ? html`<p>Sends this event again as a new delivery, with the same <code>X-Webhook-Id</code> and body, signed with the subscription’s current secret. Receivers that deduplicate on the id see it once.</p>
  <form method="post" action="${here}/redeliver" class="actions">
    ${csrfField(input.session.csrfToken)}
    <button type="submit">Redeliver</button>
  </form>`
      : html`<p>This delivery is still being attempted; it can be redelivered once it has succeeded or failed.</p>`
  }
</section>`,
  });
}
