import type { FieldError } from '../errors.js';
import type { ChecklistItem } from './schemas.js';

/** Why a checklist's items do not make a checklist (keys repeated, options or bounds of the wrong type). */
export function itemProblems(items: readonly ChecklistItem[]): FieldError[] {
  const problems: FieldError[] = [];
  const keys = new Set<string>();
  for (const [index, item] of items.entries()) {
    const at = (name: string) => `body.items.${index}${name ? `.${name}` : ''}`;
    if (keys.has(item.key)) problems.push({ field: at('key'), message: `repeats the key "${item.key}"` });
    keys.add(item.key);
    const ranged = item.type === 'number' || item.type === 'meter_reading';
    if (!ranged && (item.min !== undefined || item.max !== undefined)) problems.push({ field: at('min'), message: 'is only for number and meter_reading items' });
    if (item.min !== undefined && item.max !== undefined && item.min > item.max) problems.push({ field: at('max'), message: 'must not be below min' });
    if ((item.type === 'select') !== (item.options !== undefined)) problems.push({ field: at('options'), message: item.type === 'select' ? 'is required for a select item' : 'is only for select items' });
    if ((item.type === 'meter_reading') !== (item.meterId !== undefined)) problems.push({ field: at('meterId'), message: item.type === 'meter_reading' ? 'is required for a meter_reading item' : 'is only for meter_reading items' });
  }
  return problems;
}

/** An answer checked against its item: what is stored, whether it failed, the attachments it names. */
export interface CheckedAnswer {
  value: unknown;
  failed: boolean;
  attachmentIds: string[];
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const outside = (item: ChecklistItem, n: number) => (item.min !== undefined && n < item.min) || (item.max !== undefined && n > item.max);

/** Checks `value` against the item's type; answers the problem (for a 422 naming `body.value`) or the checked answer. */
export function checkAnswer(item: ChecklistItem, value: unknown): CheckedAnswer | string {
  const plain = (failed: boolean): CheckedAnswer => ({ value, failed, attachmentIds: [] });
  switch (item.type) {
    case 'checkbox':
      return typeof value === 'boolean' ? plain(false) : 'must be true or false';
    case 'pass_fail':
      return value === 'pass' || value === 'fail' ? plain(value === 'fail') : 'must be "pass" or "fail"';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? plain(outside(item, value)) : 'must be a number';
    case 'text':
      return typeof value === 'string' && value.trim().length > 0 && value.length <= 2000 ? plain(false) : 'must be a non-blank text of at most 2000 characters';
    case 'select':
      return typeof value === 'string' && (item.options ?? []).includes(value) ? plain(false) : `must be one of ${(item.options ?? []).map((o) => JSON.stringify(o)).join(', ')}`;
    case 'photo': {
      const ids = isObject(value) ? value.attachmentIds : undefined;
      if (!Array.isArray(ids) || ids.length === 0 || ids.length > 20 || !ids.every((id) => typeof id === 'string') || new Set(ids).size !== ids.length || Object.keys(value as object).length !== 1)
        return 'must be {"attachmentIds": [...]}: 1 to 20 distinct attachments of this work order';
      return { value: { attachmentIds: ids }, failed: false, attachmentIds: ids as string[] };
    }
    case 'signature': {
      if (!isObject(value) || typeof value.name !== 'string' || value.name.trim() === '' || value.name.length > 200 || typeof value.attachmentId !== 'string' || Object.keys(value).length !== 2)
        return 'must be {"name": "…", "attachmentId": "file_…"}: who signed, and the image of the signature attached to this work order';
      return { value: { name: value.name, attachmentId: value.attachmentId }, failed: false, attachmentIds: [value.attachmentId] };
    }
    case 'meter_reading': {
      const reading = isObject(value) ? value.value : undefined;
      if (typeof reading !== 'number' || !Number.isFinite(reading) || Object.keys(value as object).length !== 1) return 'must be {"value": <number>}: the reading, posted to the item’s meter';
      return { value: { value: reading }, failed: outside(item, reading), attachmentIds: [] };
    }
  }
}
