import { html, type SafeHtml } from '../admin/html.js';
import type { WorkRequestsTable } from '../requests/tables.js';
import { MAX_INTAKE_PHOTOS } from './schemas.js';

export const ASSETS = '/intake/assets';

/** What the form shows around its fields: where the problem is, as the link pins it. */
export interface FormView {
  token: string;
  linkName: string;
  locationName: string | null;
  assetName: string | null;
  /** The ALTCHA challenge the page's script solves, as base64 JSON (a data attribute: no inline script). */
  challenge: string;
  /** What the requester typed, kept when a submission is refused. */
  values?: Partial<Record<'description' | 'requesterName' | 'requesterEmail' | 'requesterPhone' | 'address', string>>;
  message?: string;
}

/** What the requester's status page shows: their request, how far its work order has come, and its proof once sealed. */
export interface StatusView {
  statusToken: string;
  request: WorkRequestsTable;
  /** The work order's status once approved (never who works on it). */
  recordStatus: string | null;
  proof: { id: string; statementDigest: string; leafIndex: number | null; sealedAt: string | null } | undefined;
  message?: { kind: 'success' | 'error'; text: string };
}

function when(instant: string | null): string {
  return instant ? `${instant.slice(0, 10)} ${instant.slice(11, 16)} UTC` : '';
}

function layout(title: string, body: SafeHtml, withScript = false): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<link rel="stylesheet" href="${ASSETS}/intake.css">
${withScript ? html`<script src="${ASSETS}/intake.js" defer></script>` : null}
</head>
<body>
${body}
</body>
</html>`.value;
}

function textInput(name: string, label: string, type: string, value: string | undefined, extra: { required?: boolean; maxlength: number; autocomplete: string; hint?: string }): SafeHtml {
  return html`<label for="${name}">${label}${extra.required ? null : html` <span class="quiet">(optional)</span>`}</label>
${extra.hint ? html`<p class="hint" id="${name}-hint">${extra.hint}</p>` : null}
<input type="${type}" id="${name}" name="${name}" value="${value ?? ''}" maxlength="${extra.maxlength}" autocomplete="${extra.autocomplete}"${extra.required ? html` required` : null}${extra.hint ? html` aria-describedby="${name}-hint"` : null}>`;
}

/**
 * The public form of one intake link. The proof-of-work and the honeypot come before the photos, so
 * that a submission is checked before any photo's bytes are read.
 */
export function formPage(view: FormView): string {
  const where = [view.locationName, view.assetName].filter((name): name is string => Boolean(name));
  const values = view.values ?? {};
  return layout(
    `Report a problem — ${view.linkName}`,
    html`<main>
<header>
<h1>Report a problem</h1>
<p class="for">${view.linkName}${where.length ? html` · ${where.join(' · ')}` : null}</p>
</header>
${view.message ? html`<p class="message error" role="alert">${view.message}</p>` : null}
<section aria-labelledby="form-heading">
<h2 id="form-heading">What is wrong?</h2>
<form id="intake-form" method="post" action="/intake/${view.token}" enctype="multipart/form-data" data-challenge="${view.challenge}">
  <input type="hidden" name="altcha" value="">
  <div class="trap" aria-hidden="true"><label for="website">Leave this empty</label><input type="text" id="website" name="website" tabindex="-1" autocomplete="off"></div>
  <label for="description">Describe the problem</label>
  <textarea id="description" name="description" rows="5" maxlength="5000" required>${values.description ?? ''}</textarea>
  ${textInput('requesterName', 'Your name', 'text', values.requesterName, { required: true, maxlength: 200, autocomplete: 'name' })}
  ${textInput('requesterEmail', 'Email', 'email', values.requesterEmail, { maxlength: 254, autocomplete: 'email', hint: 'So that the office can reach you; give an email or a phone number, or both.' })}
  ${textInput('requesterPhone', 'Phone', 'tel', values.requesterPhone, { maxlength: 40, autocomplete: 'tel' })}
  ${textInput('address', 'Unit or room', 'text', values.address, { maxlength: 500, autocomplete: 'off' })}
  <label for="photos">Photos <span class="quiet">(optional, up to ${MAX_INTAKE_PHOTOS})</span></label>
  <input type="file" id="photos" name="photos" accept="image/jpeg,image/png,image/webp,image/heic,image/heif" multiple>
  <p id="pow-status" class="hint" role="status" aria-live="polite"></p>
  <p id="pow-needs-script" class="message error">This form needs JavaScript for one step: a short computation that keeps robots out. Allow it for this page to send your report.</p>
  <button type="submit" class="primary-button">Send report</button>
</form>
</section>
<p class="quiet">After sending, you get a page of your own to follow your report. Keep its address.</p>
</main>`,
    true,
  );
}

const STEPS = ['Received', 'Approved', 'In progress', 'Done'] as const;

/** Where the request stands, in the requester's words: a step of STEPS, or how it ended otherwise. */
function standing(view: StatusView): { step: number } | { ended: 'rejected' | 'cancelled' | 'called off' } {
  const { request, recordStatus } = view;
  if (request.status === 'REJECTED') return { ended: 'rejected' };
  if (request.status === 'CANCELLED') return { ended: 'cancelled' };
  if (request.status === 'SUBMITTED') return { step: 0 };
  if (recordStatus === 'CANCELLED') return { ended: 'called off' };
  if (recordStatus === 'IN_PROGRESS' || recordStatus === 'ON_HOLD') return { step: 2 };
  if (recordStatus === 'COMPLETED' || recordStatus === 'CLOSED') return { step: 3 };
  return { step: 1 };
}

/** The requester's page: their report, its progress, and nothing else (no staff, no other requests). */
export function statusPage(view: StatusView): string {
  const { request, proof } = view;
  const where = standing(view);
  const steps =
    'step' in where
      ? html`<ol class="steps">${STEPS.map(
          (label, n) => html`<li class="${n < where.step ? 'past' : n === where.step ? 'current' : 'future'}"${n === where.step ? html` aria-current="step"` : null}>${label}</li>`,
        )}</ol>`
      : null;
  const ended =
    'ended' in where
      ? where.ended === 'rejected'
        ? html`<section aria-labelledby="outcome-heading" class="outcome"><h2 id="outcome-heading">Not taken on</h2><p>${request.rejection_reason ?? ''}</p><p class="quiet">Decided ${when(request.decided_at)}.</p></section>`
        : where.ended === 'cancelled'
          ? html`<section aria-labelledby="outcome-heading" class="outcome"><h2 id="outcome-heading">Cancelled</h2><p class="quiet">Cancelled ${when(request.decided_at)}. Nothing more will be done about it.</p></section>`
          : html`<section aria-labelledby="outcome-heading" class="outcome"><h2 id="outcome-heading">Called off</h2><p class="quiet">The work planned for it was called off.</p></section>`
      : null;
  const proofSection = proof
    ? html`<section aria-labelledby="proof-heading">
<h2 id="proof-heading">Proof of the work</h2>
<p>The completed work was sealed ${when(proof.sealedAt)} into a public log that outside witnesses cosign, so its record cannot be changed afterwards.</p>
<dl class="details"><div><dt>Proof</dt><dd>${proof.id}</dd></div>${proof.leafIndex !== null ? html`<div><dt>Log entry</dt><dd>${proof.leafIndex}</dd></div>` : null}<div><dt>Statement SHA-256</dt><dd class="digest">${proof.statementDigest}</dd></div></dl>
<p><a href="/verify">Check a proof yourself</a>: ask the office for its file and drop it there; it must show the proof and SHA-256 above.</p>
</section>`
    : null;
  const cancel =
    request.status === 'SUBMITTED'
      ? html`<form method="post" action="/intake/status/${view.statusToken}/cancel"><button type="submit" class="secondary-button">Cancel my report</button></form>`
      : null;
  return layout(
    'Your report',
    html`<main>
<header>
<h1>Your report</h1>
<p class="for">Sent ${when(request.created_at)}</p>
</header>
${view.message ? html`<p class="message ${view.message.kind}" role="${view.message.kind === 'error' ? 'alert' : 'status'}">${view.message.text}</p>` : null}
<section aria-labelledby="progress-heading">
<h2 id="progress-heading">Progress</h2>
${steps}
${'step' in where && where.step === 0 ? html`<p>The office has your report and will look at it.</p>` : null}
</section>
${ended}
${proofSection}
<section aria-labelledby="report-heading">
<h2 id="report-heading">What you reported</h2>
<p class="report">${request.description}</p>
${request.address ? html`<p class="quiet">Unit or room: ${request.address}</p>` : null}
${cancel}
</section>
<p class="quiet">Keep this page’s address to come back to it. Anyone with it can see this page.</p>
</main>`,
  );
}

/** The page for every token that opens nothing (unknown, disabled, rotated): it says nothing about which. */
export function unavailablePage(title: string, text: string): string {
  return layout(title, html`<main class="unavailable"><h1>${title}</h1><p>${text}</p></main>`);
}
