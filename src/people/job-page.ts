import { html, type SafeHtml } from '../admin/html.js';
import type { WorkOrder } from '../records/schemas.js';
import type { RecordChecklistView } from '../checklists/schemas.js';
import { checklistSection } from './job-checklists.js';

/** What the job page shows of one work order, read for its link. */
export interface JobView {
  token: string;
  holderName: string;
  record: WorkOrder;
  assetName: string | null;
  locationName: string | null;
  /** Image attachments of the work order, oldest first. */
  photos: { id: string; filename: string; mediaType: string }[];
  /** The work order's checklists with their answers. */
  checklists: RecordChecklistView[];
  /** What was written through this link, oldest first. */
  notes: { body: string; createdAt: string }[];
  /** A message after an action, or why it was refused. */
  message?: { kind: 'success' | 'error'; text: string };
}

const STATUS_WORDS: Record<string, string> = {
  OPEN: 'Not assigned yet',
  ASSIGNED: 'Assigned: not started',
  IN_PROGRESS: 'In progress',
  ON_HOLD: 'On hold',
  COMPLETED: 'Completed',
  CLOSED: 'Closed',
  CANCELLED: 'Cancelled',
};

/** Statuses in which the page offers no action: the work is done or called off. */
export const FINAL_STATUSES: ReadonlySet<string> = new Set(['COMPLETED', 'CLOSED', 'CANCELLED']);

/** Shown images: the formats a phone's browser draws (HEIC is listed by name). */
const DRAWN = new Set(['image/jpeg', 'image/png', 'image/webp']);

function when(instant: string | null): string {
  return instant ? `${instant.slice(0, 10)} ${instant.slice(11, 16)} UTC` : '';
}

function layout(title: string, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<link rel="stylesheet" href="/job/assets/job.css">
<script src="/job/assets/job.js" defer></script>
</head>
<body>
${body}
</body>
</html>`.value;
}

/** The phone-first page of one work order for whoever holds its link. */
export function jobPage(view: JobView): string {
  const { record, token } = view;
  const base = `/job/${token}`;
  const final = FINAL_STATUSES.has(record.status);
  const details: [string, string | null][] = [
    ['Address', record.address],
    ['Location', view.locationName],
    ['Asset', view.assetName],
    ['Priority', record.priority.charAt(0) + record.priority.slice(1).toLowerCase()],
    ['Due', record.dueAt ? when(record.dueAt) : null],
    ['Reported by', record.requesterName],
    ['Work order', record.id],
  ];
  const start =
    record.status === 'ASSIGNED' || record.status === 'ON_HOLD'
      ? html`<form method="post" action="${base}/start" class="primary"><button type="submit">${record.status === 'ON_HOLD' ? 'Resume job' : 'Start job'}</button></form>`
      : null;
  const photos = view.photos.length
    ? html`<ul class="photos">${view.photos.map((photo) =>
        DRAWN.has(photo.mediaType)
          ? html`<li><img src="${base}/photos/${photo.id}" alt="Photo ${photo.filename}" loading="lazy"></li>`
          : html`<li class="file">${photo.filename}</li>`,
      )}</ul>`
    : html`<p class="quiet">No photos yet.</p>`;
  const upload = final
    ? null
    : html`<form id="upload-form" method="post" action="${base}/photos" enctype="multipart/form-data">
  <label for="photo-input">Add photos</label>
  <input type="file" id="photo-input" name="photo" accept="image/jpeg,image/png,image/webp,image/heic,image/heif" capture="environment" multiple>
  <button type="submit">Upload photos</button>
  <p id="upload-status" role="status" aria-live="polite"></p>
</form>`;
  const notes = html`<section aria-labelledby="notes-heading">
<h2 id="notes-heading">Your notes</h2>
${view.notes.length ? html`<ul class="notes">${view.notes.map((note) => html`<li><p>${note.body}</p><p class="quiet">${when(note.createdAt)}</p></li>`)}</ul>` : html`<p class="quiet">No notes yet.</p>`}
${final
  ? null
  : html`<form method="post" action="${base}/comments">
  <label for="comment-body">Note for the office</label>
  <textarea id="comment-body" name="body" rows="3" maxlength="5000" required></textarea>
  <button type="submit">Add note</button>
</form>`}
</section>`;
  const complete =
    record.status === 'IN_PROGRESS'
      ? html`<section aria-labelledby="complete-heading">
<h2 id="complete-heading">Finish the job</h2>
<form method="post" action="${base}/complete">
  <label for="resolution">What was done</label>
  <textarea id="resolution" name="resolutionNotes" rows="4" maxlength="5000" required></textarea>
  ${view.photos.length
    ? html`<fieldset><legend>Photos to sign as evidence</legend>${view.photos.map(
        (photo) => html`<div class="check"><input type="checkbox" id="evidence-${photo.id}" name="evidence" value="${photo.id}" checked><label for="evidence-${photo.id}">${photo.filename}</label></div>`,
      )}</fieldset>`
    : null}
  <button type="submit" class="primary-button">Complete job</button>
</form>
</section>`
      : null;
  const outcome = final
    ? html`<section aria-labelledby="outcome-heading" class="outcome">
<h2 id="outcome-heading">${STATUS_WORDS[record.status]}</h2>
${record.completedAt ? html`<p>Completed ${when(record.completedAt)}.</p>` : null}
${record.resolutionNotes ? html`<p>${record.resolutionNotes}</p>` : null}
${record.cancelledAt ? html`<p>Cancelled ${when(record.cancelledAt)}.</p>` : null}
<p class="quiet">Nothing more can be done through this link.</p>
</section>`
    : null;
  const message = view.message ? html`<p class="message ${view.message.kind}" role="${view.message.kind === 'error' ? 'alert' : 'status'}">${view.message.text}</p>` : null;
  return layout(
    `${record.description.slice(0, 60)} — job`,
    html`<main>
<header>
<p class="for">Job for ${view.holderName}</p>
<h1>${record.description}</h1>
<p class="status status-${record.status.toLowerCase()}">${STATUS_WORDS[record.status] ?? record.status}</p>
</header>
${message}
${start}
${outcome}
<section aria-labelledby="details-heading">
<h2 id="details-heading">Details</h2>
<dl class="details">${details.filter(([, value]) => value).map(([term, value]) => html`<div><dt>${term}</dt><dd>${value}</dd></div>`)}</dl>
</section>
${checklistSection(view.checklists, base, final, view.photos)}
${complete}
<section aria-labelledby="photos-heading">
<h2 id="photos-heading">Photos</h2>
${photos}
${upload}
</section>
${notes}
</main>`,
  );
}

/** The page for every link that does not open (unknown, expired, revoked): it says nothing about which. */
export function unavailablePage(title: string, text: string): string {
  return layout(title, html`<main class="unavailable"><h1>${title}</h1><p>${text}</p></main>`);
}
