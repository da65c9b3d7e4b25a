import { html, type SafeHtml } from '../admin/html.js';
import { errors } from '../errors.js';
import type { ChecklistItem, RecordChecklistView } from '../checklists/schemas.js';

type Photo = { id: string; filename: string };
type FormBody = Record<string, unknown>;

/** An answer as the page shows it. */
function shown(item: ChecklistItem, value: unknown, photos: readonly Photo[]): string {
  const name = (id: unknown) => photos.find((photo) => photo.id === id)?.filename ?? String(id);
  const object = (value ?? {}) as Record<string, unknown>;
  switch (item.type) {
    case 'checkbox':
      return value === true ? 'Yes' : 'No';
    case 'pass_fail':
      return value === 'pass' ? 'Pass' : 'Fail';
    case 'photo':
      return ((object.attachmentIds as unknown[] | undefined) ?? []).map(name).join(', ');
    case 'signature':
      return `Signed by ${String(object.name)} (${name(object.attachmentId)})`;
    case 'meter_reading':
      return `${String(object.value)}${item.unit ? ` ${item.unit}` : ''}`;
    case 'number':
      return `${String(value)}${item.unit ? ` ${item.unit}` : ''}`;
    default:
      return String(value);
  }
}

/** The inputs of one item's form, named as answerFromForm reads them. */
function inputs(item: ChecklistItem, id: string, photos: readonly Photo[]): SafeHtml {
  const range = item.min !== undefined || item.max !== undefined ? ` (${item.min ?? '…'} to ${item.max ?? '…'}${item.unit ? ` ${item.unit}` : ''})` : item.unit ? ` (${item.unit})` : '';
  const photoChoices = (type: 'checkbox' | 'radio', name: string) =>
    photos.length
      ? photos.map((photo) => html`<div class="check"><input type="${type}" id="${id}-${photo.id}" name="${name}" value="${photo.id}"><label for="${id}-${photo.id}">${photo.filename}</label></div>`)
      : html`<p class="quiet">Upload a photo below first.</p>`;
  switch (item.type) {
    case 'checkbox':
      return html`<div class="check"><input type="checkbox" id="${id}" name="checked" value="true"><label for="${id}">Done</label></div>`;
    case 'pass_fail':
      return html`<fieldset><legend>Result</legend>${(['pass', 'fail'] as const).map((result) => html`<div class="check"><input type="radio" id="${id}-${result}" name="result" value="${result}" required><label for="${id}-${result}">${result === 'pass' ? 'Pass' : 'Fail'}</label></div>`)}</fieldset>`;
    case 'number':
    case 'meter_reading':
      return html`<label for="${id}">Value${range}</label><input type="number" step="any" inputmode="decimal" id="${id}" name="number" required>`;
    case 'text':
      return html`<label for="${id}">Answer</label><textarea id="${id}" name="text" rows="2" maxlength="2000" required></textarea>`;
    case 'select':
      return html`<label for="${id}">Choice</label><select id="${id}" name="choice" required>${(item.options ?? []).map((option) => html`<option value="${option}">${option}</option>`)}</select>`;
    case 'photo':
      return html`<fieldset><legend>Photos that show it</legend>${photoChoices('checkbox', 'photo')}</fieldset>`;
    case 'signature':
      return html`<label for="${id}">Name of who signs</label><input type="text" id="${id}" name="signer" maxlength="200" required><fieldset><legend>Photo of the signature</legend>${photoChoices('radio', 'signature')}</fieldset>`;
  }
}

/** The checklists of the job: each item with its answer, and a form to answer it while the job is open. */
export function checklistSection(checklists: readonly RecordChecklistView[], base: string, final: boolean, photos: readonly Photo[]): SafeHtml | null {
  if (checklists.length === 0) return null;
  return html`<section aria-labelledby="checklists-heading">
<h2 id="checklists-heading">Checklist${checklists.length > 1 ? 's' : ''}</h2>
${checklists.map((checklist, c) => {
  const answers = new Map(checklist.answers.map((answer) => [answer.key, answer]));
  return html`<h3>${checklist.name}</h3>
<p class="quiet">${checklist.missing.length ? `${checklist.missing.length} required item${checklist.missing.length > 1 ? 's' : ''} still to answer.` : 'Every required item is answered.'}</p>
<ol class="items">${checklist.items.map((item, i) => {
    const answer = answers.get(item.key);
    const id = `item-${c}-${i}`;
    return html`<li><p class="item-label">${item.label}${item.required ? html` <span class="quiet">(required)</span>` : null}</p>
${answer ? html`<p class="answer${answer.failed ? ' failed' : ''}">${answer.failed ? 'Failed: ' : 'Answered: '}${shown(item, answer.value, photos)}</p>` : null}
${final ? null : html`<form method="post" action="${base}/checklists/${checklist.checklistId}/items/${item.key}">${inputs(item, id, photos)}<button type="submit">${answer ? 'Change answer' : 'Save answer'}</button></form>`}</li>`;
  })}</ol>`;
})}
</section>`;
}

const one = (body: FormBody, name: string): string | undefined => {
  const value = body[name];
  return typeof value === 'string' ? value : Array.isArray(value) && typeof value[0] === 'string' ? value[0] : undefined;
};
const many = (body: FormBody, name: string): string[] => {
  const value = body[name];
  return typeof value === 'string' ? [value] : Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
};

/** The answer value a form of checklistSection sent for `item`, as PUT …/items/{key} takes it (checked there again). */
export function answerFromForm(item: ChecklistItem, body: unknown): unknown {
  const form = (body !== null && typeof body === 'object' ? body : {}) as FormBody;
  const refuse = (message: string, detail: string) => errors.validation([{ field: 'body.value', message }], detail);
  switch (item.type) {
    case 'checkbox':
      return one(form, 'checked') === 'true';
    case 'pass_fail':
      return one(form, 'result');
    case 'number':
    case 'meter_reading': {
      const text = (one(form, 'number') ?? '').trim();
      const value = text === '' ? Number.NaN : Number(text);
      if (!Number.isFinite(value)) throw refuse('must be a number', 'Enter the value as a number.');
      return item.type === 'number' ? value : { value };
    }
    case 'text':
      return (one(form, 'text') ?? '').trim();
    case 'select':
      return one(form, 'choice');
    case 'photo': {
      const attachmentIds = many(form, 'photo');
      if (attachmentIds.length === 0) throw refuse('no photo was chosen', 'Choose one or more photos first.');
      return { attachmentIds };
    }
    case 'signature': {
      const attachmentId = one(form, 'signature');
      if (attachmentId === undefined) throw refuse('no photo of the signature was chosen', 'Choose the photo of the signature first.');
      return { name: (one(form, 'signer') ?? '').trim(), attachmentId };
    }
  }
}
