import type { FoundEvent } from '../events/feed.js';
import type { Organization } from '../orgs/organizations.js';
import { html, type SafeHtml } from './html.js';
import { describedBy, fieldError, invalid, layout, organizationNav, time, type FieldErrors } from './pages.js';
import type { AdminSession } from './service.js';

/** The filters of the event log as the form holds them (the text typed, errors apart). */
export interface EventFilterForm {
  type: string;
  id: string;
  /** `YYYY-MM-DDTHH:MM` in UTC, as a datetime-local input gives it. */
  from: string;
  to: string;
  errors: FieldErrors;
}

export interface EventsPageInput {
  session: AdminSession;
  organization: Organization;
  form: EventFilterForm;
  eventTypes: readonly string[];
  events: FoundEvent[];
  total: number;
  limit: number;
  offset: number;
}

/** The ids a payload names at its top level (`recordId`, `assetId`, …), to show beside the type. */
function namedIds(payloadJson: string): string[] {
  try {
    const payload = JSON.parse(payloadJson) as Record<string, unknown>;
    return Object.entries(payload)
      .filter(([key, value]) => key.endsWith('Id') && typeof value === 'string')
      .map(([key, value]) => `${key} ${String(value)}`);
  } catch {
    return [];
  }
}

function pretty(payloadJson: string): string {
  try {
    return JSON.stringify(JSON.parse(payloadJson), null, 2);
  } catch {
    return payloadJson;
  }
}

function eventRow(event: FoundEvent): SafeHtml {
  return html`<tr>
    <td>${time(event.occurredAt)}</td>
    <th scope="row"><code>${event.type}</code></th>
    <td><code>${event.id}</code><br><small>sequence ${event.sequence}</small></td>
    <td>${namedIds(event.payloadJson).map((text) => html`<span class="detail">${text}</span> `)}</td>
    <td><details><summary>Payload<span class="visually-hidden"> of ${event.id}</span></summary><pre class="excerpt">${pretty(event.payloadJson)}</pre></details></td>
  </tr>`;
}

export function eventsPage(input: EventsPageInput): SafeHtml {
  const { organization: org, form } = input;
  const base = `/admin/organizations/${org.id}/events`;
  const filters = new URLSearchParams(Object.entries({ type: form.type, id: form.id, from: form.from, to: form.to }).filter(([, value]) => value !== ''));
  const query = (offset: number) => {
    const params = new URLSearchParams(filters);
    params.set('offset', String(offset));
    return `${base}?${params.toString()}`;
  };
  const previous = input.offset > 0 ? Math.max(0, input.offset - input.limit) : undefined;
  const next = input.offset + input.limit < input.total ? input.offset + input.limit : undefined;
  const typeOptions = ['', ...input.eventTypes].map(
    (type) => html`<option value="${type}"${form.type === type ? html` selected` : html``}>${type === '' ? 'All events' : type}</option>`,
  );
  const errors = form.errors;
  const filtered = filters.size > 0;
  return layout({
    title: `Events of ${org.name}`,
    session: input.session,
    current: 'organizations',
    main: html`<nav aria-label="Breadcrumb" class="breadcrumb"><ol><li><a href="/admin/organizations">Organizations</a></li><li><a href="/admin/organizations/${org.id}/keys">${org.name}</a></li><li aria-current="page">Events</li></ol></nav>
<h1>Events <span class="subtitle">of ${org.name}</span></h1>
${organizationNav(org.id, 'events')}
<p>Every event of the organization’s feed (what webhooks deliver and <code>GET /api/v1/events</code> lists), newest first, kept as long as the feed keeps them. The payload is exactly what deliveries carry.</p>
<form method="get" action="${base}" class="filters" novalidate>
  <fieldset>
    <legend>Filter</legend>
    <div class="filter-grid">
      <div class="field">
        <label for="event-type">Type</label>
        <select id="event-type" name="type"${invalid(errors.type)}${describedBy('event-type', errors.type)}>${typeOptions}</select>
        ${fieldError('event-type', errors.type)}
      </div>
      <div class="field">
        <label for="event-id">Record, resource or event id</label>
        <input id="event-id" name="id" value="${form.id}" maxlength="64" spellcheck="false" autocomplete="off"${invalid(errors.id)}${describedBy('event-id', errors.id, 'event-id-hint')}>
        <p class="hint" id="event-id-hint">An event id (<code>evt_…</code>), or an id its payload names, such as <code>rec_…</code>.</p>
        ${fieldError('event-id', errors.id)}
      </div>
      <div class="field">
        <label for="event-from">From (UTC)</label>
        <input id="event-from" name="from" type="datetime-local" value="${form.from}"${invalid(errors.from)}${describedBy('event-from', errors.from)}>
        ${fieldError('event-from', errors.from)}
      </div>
      <div class="field">
        <label for="event-to">Before (UTC)</label>
        <input id="event-to" name="to" type="datetime-local" value="${form.to}"${invalid(errors.to)}${describedBy('event-to', errors.to)}>
        ${fieldError('event-to', errors.to)}
      </div>
    </div>
    <div class="actions"><button type="submit">Filter</button>${filtered ? html`<a href="${base}">Clear the filters</a>` : html``}</div>
  </fieldset>
</form>
<section>
  <h2 id="event-list-title">${filtered ? 'Matching events' : 'Events'} <span class="count">(${input.total})</span></h2>
  ${
    input.events.length === 0
      ? html`<p>No events${filtered ? html` match these filters` : html` yet`}.</p>`
      : html`<div class="table-wrap" role="region" aria-labelledby="event-list-title" tabindex="0">
  <table class="events">
    <thead><tr><th scope="col">Occurred</th><th scope="col">Type</th><th scope="col">Event</th><th scope="col">Names</th><th scope="col">Payload</th></tr></thead>
    <tbody>${input.events.map(eventRow)}</tbody>
  </table>
  </div>`
  }
  <nav aria-label="Pages of events" class="pager">
    <p>Events ${input.total === 0 ? 0 : input.offset + 1}–${input.offset + input.events.length} of ${input.total}</p>
    ${previous !== undefined ? html`<a href="${query(previous)}" rel="prev">Newer</a>` : html``}
    ${next !== undefined ? html`<a href="${query(next)}" rel="next">Older</a>` : html``}
  </nav>
</section>`,
  });
}
