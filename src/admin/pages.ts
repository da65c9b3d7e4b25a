import type { ApiKey } from '../keys/api-keys.js';
import type { Scopes } from '../keys/scopes.js';
import type { Organization } from '../orgs/organizations.js';
import { html, type HtmlValue, type SafeHtml } from './html.js';
import type { AdminSession, AuditEntry } from './service.js';

/** Name of the hidden field every form carries its CSRF token in. */
export const CSRF_FIELD = '_csrf';

export const EXPIRY_CHOICES = [
  { value: 'never', label: 'Never' },
  { value: '30d', label: 'In 30 days' },
  { value: '90d', label: 'In 90 days' },
  { value: '365d', label: 'In 1 year' },
  { value: 'date', label: 'On a date' },
] as const;
export type ExpiryChoice = (typeof EXPIRY_CHOICES)[number]['value'];

export type FieldErrors = Partial<Record<string, string>>;

interface LayoutInput {
  title: string;
  session?: AdminSession | undefined;
  /** Which navigation entry is the current page. */
  current?: 'organizations' | 'audit';
  main: SafeHtml;
}

/**
 * A timestamp people read (`2026-11-22 08:15 UTC`) that machines can still parse. It may wrap between
 * the date and the clock only, so that a table of them fits a laptop screen.
 */
export function time(iso: string | null, empty = '—'): SafeHtml {
  if (!iso) return html`<span class="muted">${empty}</span>`;
  return html`<time datetime="${iso}">${iso.slice(0, 10)} <span class="clock">${iso.slice(11, 16)} UTC</span></time>`;
}

export function csrfField(token: string): SafeHtml {
  return html`<input type="hidden" name="${CSRF_FIELD}" value="${token}">`;
}

export function fieldError(id: string, message: string | undefined): SafeHtml {
  return message ? html`<p class="field-error" id="${id}-error">${message}</p>` : html``;
}

export function describedBy(id: string, message: string | undefined, hint?: string): SafeHtml {
  const ids = [hint, message ? `${id}-error` : undefined].filter(Boolean).join(' ');
  return ids ? html` aria-describedby="${ids}"` : html``;
}

export function invalid(message: string | undefined): SafeHtml {
  return message ? html` aria-invalid="true"` : html``;
}

export function notice(kind: 'success' | 'error' | 'warning', body: HtmlValue): SafeHtml {
  // role=alert for errors so screen readers announce them on page load; status for the rest.
  return html`<div class="notice notice-${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${body}</div>`;
}

/** The pages of one organization, as tabs under its heading. */
export function organizationNav(orgId: string, current: 'keys' | 'webhooks' | 'events'): SafeHtml {
  const tab = (key: typeof current, href: string, label: string) =>
    html`<li><a href="/admin/organizations/${orgId}/${href}"${current === key ? html` aria-current="page"` : html``}>${label}</a></li>`;
  return html`<nav aria-label="Organization" class="org-nav"><ul>${tab('keys', 'keys', 'API keys')}${tab('webhooks', 'webhooks', 'Webhooks')}${tab('events', 'events', 'Events')}</ul></nav>`;
}

export function layout({ title, session, current, main }: LayoutInput): SafeHtml {
  const navLink = (key: LayoutInput['current'], href: string, label: string) =>
    html`<li><a href="${href}"${current === key ? html` aria-current="page"` : html``}>${label}</a></li>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · Work orders admin</title>
<link rel="stylesheet" href="/admin/assets/admin.css">
<script src="/admin/assets/copy-key.js" defer></script>
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="site-header">
  <div class="bar">
    <a class="brand" href="/admin">Work orders <span>admin</span></a>
    ${
      session
        ? html`<nav aria-label="Main">
      <ul>
        ${navLink('organizations', '/admin/organizations', 'Organizations')}
        ${navLink('audit', '/admin/audit', 'Audit log')}
      </ul>
    </nav>
    <form class="sign-out" method="post" action="/admin/logout">
      ${csrfField(session.csrfToken)}
      <span class="who">${session.email}</span>
      <button type="submit" class="button-secondary">Sign out</button>
    </form>`
        : html``
    }
  </div>
</header>
<main id="main" tabindex="-1">
${main}
</main>
<footer class="site-footer"><p>Self-hosted work-order service · <a href="/docs">API documentation</a></p></footer>
</body>
</html>`;
}

// --- sign-in and first-run setup ------------------------------------------------------------------

export function signInPage(input: { csrfToken: string; email?: string; error?: string | undefined }): SafeHtml {
  return layout({
    title: 'Sign in',
    main: html`<section class="narrow" aria-labelledby="sign-in-title">
  <h1 id="sign-in-title">Sign in</h1>
  ${input.error ? notice('error', input.error) : html``}
  <form method="post" action="/admin/login" class="stack">
    ${csrfField(input.csrfToken)}
    <div class="field">
      <label for="email">Email</label>
      <input id="email" name="email" type="email" autocomplete="username" required value="${input.email ?? ''}" autofocus>
    </div>
    <div class="field">
      <label for="password">Password</label>
      <input id="password" name="password" type="password" autocomplete="current-password" required>
    </div>
    <button type="submit">Sign in</button>
  </form>
  <p class="muted">No account yet? The first one comes from the one-time setup link the service prints at start while no administrator exists (each start prints a new one), or an operator creates one in the service's directory with <code>printf %s "$PASSWORD" | npx wo admin create-user --email you@example.com</code>.</p>
</section>`,
  });
}

export function setupPage(input: { csrfToken: string; token: string; email?: string; errors?: FieldErrors; error?: string }): SafeHtml {
  const errors = input.errors ?? {};
  return layout({
    title: 'Create the first administrator',
    main: html`<section class="narrow" aria-labelledby="setup-title">
  <h1 id="setup-title">Create the first administrator</h1>
  <p>This one-time link works once. After this account exists, more are added, in the service's directory, with <code>npx wo admin create-user --email …</code>.</p>
  ${input.error ? notice('error', input.error) : html``}
  <form method="post" action="/admin/setup" class="stack">
    ${csrfField(input.csrfToken)}
    <input type="hidden" name="token" value="${input.token}">
    <div class="field">
      <label for="email">Email</label>
      <input id="email" name="email" type="email" autocomplete="username" required value="${input.email ?? ''}"${invalid(errors.email)}${describedBy('email', errors.email)}>
      ${fieldError('email', errors.email)}
    </div>
    <div class="field">
      <label for="password">Password</label>
      <input id="password" name="password" type="password" autocomplete="new-password" required minlength="12"${invalid(errors.password)}${describedBy('password', errors.password, 'password-hint')}>
      <p class="hint" id="password-hint">At least 12 characters. A passphrase of several words is easiest.</p>
      ${fieldError('password', errors.password)}
    </div>
    <button type="submit">Create administrator</button>
  </form>
</section>`,
  });
}

// --- organizations --------------------------------------------------------------------------------

export function organizationsPage(input: {
  session: AdminSession;
  organizations: Organization[];
  name?: string;
  error?: string | undefined;
  created?: Organization | undefined;
}): SafeHtml {
  const rows = input.organizations.map(
    (org) => html`<tr>
      <th scope="row"><a href="/admin/organizations/${org.id}/keys">${org.name}</a></th>
      <td><code>${org.id}</code></td>
      <td>${time(org.createdAt)}</td>
      <td><a href="/admin/organizations/${org.id}/keys">API keys<span class="visually-hidden"> of ${org.name}</span></a> · <a href="/admin/organizations/${org.id}/webhooks">Webhooks<span class="visually-hidden"> of ${org.name}</span></a> · <a href="/admin/organizations/${org.id}/events">Events<span class="visually-hidden"> of ${org.name}</span></a></td>
    </tr>`,
  );
  return layout({
    title: 'Organizations',
    session: input.session,
    current: 'organizations',
    main: html`<h1>Organizations</h1>
${input.created ? notice('success', html`Organization <strong>${input.created.name}</strong> created. <a href="/admin/organizations/${input.created.id}/keys">Create its first API key</a>.`) : html``}
<section>
  <h2 id="org-list-title">All organizations <span class="count">(${input.organizations.length})</span></h2>
  ${
    input.organizations.length === 0
      ? html`<p>No organizations yet. Create the first one below.</p>`
      : html`<div class="table-wrap" role="region" aria-labelledby="org-list-title" tabindex="0">
  <table>
    <thead><tr><th scope="col">Name</th><th scope="col">Id</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${rows}</tbody>
  </table>
  </div>`
  }
</section>
<section aria-labelledby="org-create-title" class="panel">
  <h2 id="org-create-title">Create an organization</h2>
  <form method="post" action="/admin/organizations" class="inline-form">
    ${csrfField(input.session.csrfToken)}
    <div class="field">
      <label for="org-name">Name</label>
      <input id="org-name" name="name" required maxlength="200" value="${input.name ?? ''}"${invalid(input.error)}${describedBy('org-name', input.error)}>
      ${fieldError('org-name', input.error)}
    </div>
    <button type="submit">Create organization</button>
  </form>
</section>`,
  });
}

// --- API keys -------------------------------------------------------------------------------------

export interface KeyFormState {
  name: string;
  scopes: string[];
  expiry: ExpiryChoice;
  expiresOn: string;
  /** One-time id of this rendering of the form; a second submission of it creates nothing. */
  submissionId: string;
  errors: FieldErrors;
}

export interface KeysPageInput {
  session: AdminSession;
  organization: Organization;
  keys: ApiKey[];
  audit: AuditEntry[];
  auditTotal: number;
  form: KeyFormState;
  /** The scopes a key can be given, offered as checkboxes. */
  scopes: Scopes;
  /** Present only in the response to the create form: the one time the key value is shown. */
  createdKey?: { apiKey: ApiKey; key: string } | undefined;
  message?: { kind: 'success' | 'error' | 'warning'; body: HtmlValue } | undefined;
}

const STATE_LABELS = { active: 'Active', expired: 'Expired', revoked: 'Revoked' } as const;

function keyRow(orgId: string, key: ApiKey): SafeHtml {
  return html`<tr>
    <th scope="row">${key.name}</th>
    <td><code>${key.prefix}…</code></td>
    <td><ul class="scope-list">${key.scopes.map((scope) => html`<li><code>${scope}</code></li>`)}</ul></td>
    <td>${time(key.createdAt)}</td>
    <td>${time(key.lastUsedAt, 'never')}</td>
    <td>${time(key.expiresAt, 'never')}</td>
    <td><span class="state state-${key.state}">${STATE_LABELS[key.state]}</span>${key.revokedAt ? html`<br><small>${time(key.revokedAt)}</small>` : html``}</td>
    <td>${
      key.state === 'revoked'
        ? html``
        : html`<a class="button-danger-link" href="/admin/organizations/${orgId}/keys/${key.id}/revoke">Revoke<span class="visually-hidden"> ${key.name}</span></a>`
    }</td>
  </tr>`;
}

function createdKeyPanel(created: { apiKey: ApiKey; key: string }): SafeHtml {
  return html`<section class="one-time-key" aria-labelledby="new-key-title">
  <h2 id="new-key-title">New API key “${created.apiKey.name}”</h2>
  <p class="warning-text"><strong>Copy this key now. It is shown only this once</strong>: we store only a hash of it, so nobody can show it to you again. If you lose it, revoke it and create a new one.</p>
  <div class="key-box">
    <label for="new-key-value">API key</label>
    <input id="new-key-value" class="key-value" type="text" readonly value="${created.key}" spellcheck="false" autocomplete="off" data-one-time-key>
    <button type="button" class="copy-button" data-copy-target="new-key-value" hidden>Copy key</button>
    <span class="copy-status" role="status" aria-live="polite" data-copy-status></span>
  </div>
  <p>Scopes: ${created.apiKey.scopes.map((s, i) => html`${i > 0 ? ', ' : ''}<code>${s}</code>`)}. Expires: ${time(created.apiKey.expiresAt, 'never')}.</p>
  <p class="muted">Use it as <code>Authorization: Bearer ${created.apiKey.prefix}…</code></p>
</section>`;
}

function keyForm(orgId: string, csrfToken: string, form: KeyFormState, scopes: Scopes): SafeHtml {
  const errors = form.errors;
  const scopeBoxes = scopes.all.map(
    (scope) => html`<div class="checkbox">
      <input type="checkbox" id="scope-${scope.replace(':', '-')}" name="scopes" value="${scope}"${form.scopes.includes(scope) ? html` checked` : html``} aria-describedby="scope-${scope.replace(':', '-')}-hint">
      <label for="scope-${scope.replace(':', '-')}"><code>${scope}</code></label>
      <p class="hint" id="scope-${scope.replace(':', '-')}-hint">${scopes.descriptions[scope]}</p>
    </div>`,
  );
  const expiryRadios = EXPIRY_CHOICES.map(
    (choice) => html`<div class="radio">
      <input type="radio" id="expiry-${choice.value}" name="expiry" value="${choice.value}"${form.expiry === choice.value ? html` checked` : html``}>
      <label for="expiry-${choice.value}">${choice.label}</label>
    </div>`,
  );
  return html`<form method="post" action="/admin/organizations/${orgId}/keys" class="stack" novalidate>
    ${csrfField(csrfToken)}
    <input type="hidden" name="submission" value="${form.submissionId}">
    <div class="field">
      <label for="key-name">Name</label>
      <input id="key-name" name="name" required maxlength="200" value="${form.name}"${invalid(errors.name)}${describedBy('key-name', errors.name, 'key-name-hint')}>
      <p class="hint" id="key-name-hint">Say who uses it, e.g. “ERP production”.</p>
      ${fieldError('key-name', errors.name)}
    </div>
    <fieldset${invalid(errors.scopes)}${describedBy('scopes', errors.scopes)}>
      <legend>Scopes <span class="hint-inline">(grant only what the client needs)</span></legend>
      ${fieldError('scopes', errors.scopes)}
      <div class="scope-grid">${scopeBoxes}</div>
    </fieldset>
    <fieldset>
      <legend>Expiry</legend>
      <div class="radio-row">${expiryRadios}</div>
      <div class="field">
        <label for="expires-on">Date, when “On a date” is chosen</label>
        <input id="expires-on" name="expiresOn" type="date" value="${form.expiresOn}"${invalid(errors.expiresOn)}${describedBy('expires-on', errors.expiresOn, 'expires-on-hint')}>
        <p class="hint" id="expires-on-hint">The key stops working at the end of that day (UTC).</p>
        ${fieldError('expires-on', errors.expiresOn)}
      </div>
    </fieldset>
    <button type="submit">Create API key</button>
  </form>`;
}

export function auditTable(entries: AuditEntry[], labelledBy: string): SafeHtml {
  if (entries.length === 0) return html`<p>Nothing recorded yet.</p>`;
  return html`<div class="table-wrap" role="region" aria-labelledby="${labelledBy}" tabindex="0">
  <table>
    <thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Details</th></tr></thead>
    <tbody>${entries.map(
      (entry) => html`<tr>
      <td>${time(entry.createdAt)}</td>
      <td>${entry.actorEmail}</td>
      <td><code>${entry.action}</code></td>
      <td>${entry.target ? html`<code>${entry.target}</code>` : html`<span class="muted">—</span>`}</td>
      <td>${Object.entries(entry.details).map(([k, v]) => html`<span class="detail">${k}: ${Array.isArray(v) ? v.join(', ') : String(v)}</span> `)}</td>
    </tr>`,
    )}</tbody>
  </table>
  </div>`;
}

export function keysPage(input: KeysPageInput): SafeHtml {
  const { organization: org } = input;
  return layout({
    title: `API keys of ${org.name}`,
    session: input.session,
    current: 'organizations',
    main: html`<nav aria-label="Breadcrumb" class="breadcrumb"><ol><li><a href="/admin/organizations">Organizations</a></li><li aria-current="page">${org.name}</li></ol></nav>
<h1>API keys <span class="subtitle">of ${org.name}</span></h1>
${organizationNav(org.id, 'keys')}
${input.message ? notice(input.message.kind, input.message.body) : html``}
${input.createdKey ? createdKeyPanel(input.createdKey) : html``}
<section>
  <h2 id="key-list-title">Keys <span class="count">(${input.keys.length})</span></h2>
  ${
    input.keys.length === 0
      ? html`<p>This organization has no API keys yet.</p>`
      : html`<div class="table-wrap" role="region" aria-labelledby="key-list-title" tabindex="0">
  <table class="keys">
    <thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col">State</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${input.keys.map((key) => keyRow(org.id, key))}</tbody>
  </table>
  </div>`
  }
</section>
<section aria-labelledby="key-create-title" class="panel">
  <h2 id="key-create-title">Create an API key</h2>
  ${keyForm(org.id, input.session.csrfToken, input.form, input.scopes)}
</section>
<section>
  <h2 id="org-audit-title">Activity</h2>
  ${auditTable(input.audit, 'org-audit-title')}
  ${input.auditTotal > input.audit.length ? html`<p><a href="/admin/audit?org=${org.id}">All ${input.auditTotal} entries</a></p>` : html``}
</section>`,
  });
}

export function revokeConfirmPage(input: { session: AdminSession; organization: Organization; key: ApiKey }): SafeHtml {
  const { organization: org, key } = input;
  const back = `/admin/organizations/${org.id}/keys`;
  return layout({
    title: `Revoke ${key.name}`,
    session: input.session,
    current: 'organizations',
    main: html`<nav aria-label="Breadcrumb" class="breadcrumb"><ol><li><a href="/admin/organizations">Organizations</a></li><li><a href="${back}">${org.name}</a></li><li aria-current="page">Revoke key</li></ol></nav>
<section class="narrow panel" aria-labelledby="revoke-title">
  <h1 id="revoke-title">Revoke API key “${key.name}”?</h1>
  <dl class="facts">
    <dt>Prefix</dt><dd><code>${key.prefix}…</code></dd>
    <dt>Scopes</dt><dd>${key.scopes.join(', ')}</dd>
    <dt>Last used</dt><dd>${time(key.lastUsedAt, 'never')}</dd>
  </dl>
  ${
    key.state === 'revoked'
      ? html`<p>This key is already revoked.</p><p><a href="${back}">Back to the keys</a></p>`
      : html`<p class="warning-text">Every client using this key gets <strong>401 Unauthorized</strong> from its next request. This cannot be undone.</p>
  <form method="post" action="${back}/${key.id}/revoke" class="actions">
    ${csrfField(input.session.csrfToken)}
    <button type="submit" class="button-danger">Revoke key</button>
    <a href="${back}">Cancel</a>
  </form>`
  }
</section>`,
  });
}

// --- audit log and errors ---------------------------------------------------------------------------

export function auditPage(input: {
  session: AdminSession;
  entries: AuditEntry[];
  total: number;
  limit: number;
  offset: number;
  organization?: Organization | undefined;
}): SafeHtml {
  const query = (offset: number) => `/admin/audit?${input.organization ? `org=${input.organization.id}&` : ''}offset=${offset}`;
  const previous = input.offset > 0 ? Math.max(0, input.offset - input.limit) : undefined;
  const next = input.offset + input.limit < input.total ? input.offset + input.limit : undefined;
  return layout({
    title: 'Audit log',
    session: input.session,
    current: 'audit',
    main: html`<h1>Audit log${input.organization ? html` <span class="subtitle">of ${input.organization.name}</span>` : html``}</h1>
<p>Every sign-in, sign-out and change made here or with the <code>wo</code> command line (<code>npx wo orgs</code>, <code>keys</code>, <code>admin</code>), newest first.</p>
<section>
  <h2 id="audit-title" class="visually-hidden">Entries</h2>
  ${auditTable(input.entries, 'audit-title')}
</section>
<nav aria-label="Pages" class="pager">
  <p>Entries ${input.total === 0 ? 0 : input.offset + 1}–${input.offset + input.entries.length} of ${input.total}</p>
  ${previous !== undefined ? html`<a href="${query(previous)}" rel="prev">Newer</a>` : html``}
  ${next !== undefined ? html`<a href="${query(next)}" rel="next">Older</a>` : html``}
</nav>`,
  });
}

export function errorPage(input: { session?: AdminSession | undefined; status: number; title: string; message: string; signInLink?: boolean }): SafeHtml {
  return layout({
    title: input.title,
    session: input.session,
    main: html`<section class="narrow" aria-labelledby="error-title">
  <h1 id="error-title">${input.title}</h1>
  ${notice('error', input.message)}
  <p>${input.signInLink ? html`<a href="/admin/login">Sign in</a>` : html`<a href="/admin">Back to the admin area</a>`}</p>
  <p class="muted">HTTP ${input.status}</p>
</section>`,
  });
}
