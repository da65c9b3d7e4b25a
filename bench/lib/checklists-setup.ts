// What the checklists part (bench/parts/checklists.ts) makes through the API before it seeds and
// measures: five custom fields on work orders, a 20-item checklist (every item required), work
// orders carrying it for the answer and comment loads, and work orders ready to complete.
import type { RequestSpec } from 'autocannon';
import { runLoad } from './load.js';
import type { SeededCustomFields } from './seed-records.js';
import { BENCH_SCOPES, callApi, createCategory, createTenant, recordBody, type Tenant } from './tenant.js';

export const CHECKLISTS_SCOPES = [...BENCH_SCOPES, 'checklists:read', 'checklists:write', 'fields:read', 'fields:write'];

/** The work orders the answer and comment loads spread over, so that no one work order's lock decides the figure. */
export const ANSWER_RECORDS = 20;

/** The five custom fields every seeded work order has a value of, one of each filterable type. */
export const BENCH_CUSTOM_FIELDS = [
  { key: 'boiler_type', label: 'Boiler type', type: 'select', options: ['gas', 'oil', 'electric', 'heat_pump'] },
  { key: 'floor', label: 'Floor', type: 'number' },
  { key: 'inspected_on', label: 'Last inspected', type: 'date' },
  { key: 'building_code', label: 'Building code', type: 'text' },
  { key: 'under_warranty', label: 'Under warranty', type: 'boolean' },
] as const;

const BOILERS = ['gas', 'gas', 'oil', 'electric', 'heat_pump'];
const DAY_MS = 86_400_000;

/** The values of the `serial`-th seeded work order: `boiler_type` is `gas` on 2 in 5 (40 %, as OPEN is of the statuses). */
export const seededFieldValues: SeededCustomFields = (serial) => ({
  boiler_type: BOILERS[serial % BOILERS.length]!,
  floor: serial % 12,
  inspected_on: new Date(Date.UTC(2026, 0, 1) + (serial % 365) * DAY_MS).toISOString().slice(0, 10),
  building_code: `B-${serial % 500}`,
  under_warranty: serial % 3 === 0,
});

/** The filter measured, and how many of the seeded serials `first` … `first + count - 1` it matches. */
export const FILTER = { key: 'boiler_type', value: 'gas' } as const;
export function seededMatches(first: number, count: number): number {
  let n = 0;
  for (let serial = first; serial < first + count; serial++) if (seededFieldValues(serial)[FILTER.key] === FILTER.value) n++;
  return n;
}

/** 20 items, every one required: a note, a pressure reading within its range, 18 pass/fail checks (all answered pass: no follow-up). */
const ITEMS = [
  { key: 'notes', label: 'Notes', type: 'text', required: true },
  { key: 'pressure', label: 'Pressure (bar)', type: 'number', min: 1, max: 2.5, required: true },
  ...Array.from({ length: 18 }, (_, i) => ({ key: `check_${i}`, label: `Check ${i}`, type: 'pass_fail', required: true })),
];
const ANSWERS: Record<string, unknown> = Object.fromEntries(ITEMS.map((item) => [item.key, item.type === 'text' ? 'Burner cleaned, flue checked' : item.type === 'number' ? 1.8 : 'pass']));
export const CHECKLIST_ITEMS = ITEMS.length;

export interface ChecklistsFixture {
  categoryId: string;
  checklistId: string;
  /** Open work orders with the checklist, for the answer and comment loads. */
  answerRecordIds: string[];
}

export function createChecklistsTenant(dataDir: string, env: Record<string, string> = {}): Promise<Tenant> {
  return createTenant(dataDir, undefined, env, CHECKLISTS_SCOPES);
}

async function created(baseUrl: string, tenant: Tenant, path: string, body: unknown): Promise<{ id: string }> {
  const answer = await callApi<{ id: string }>(baseUrl, tenant, 'POST', path, body);
  if (answer.status !== 201) throw new Error(`POST ${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

export async function setUpChecklists(baseUrl: string, tenant: Tenant): Promise<ChecklistsFixture> {
  const categoryId = await createCategory(baseUrl, tenant);
  for (const field of BENCH_CUSTOM_FIELDS) await created(baseUrl, tenant, '/api/v1/custom-fields', { ...field, entity: 'record' });
  const { id: checklistId } = await created(baseUrl, tenant, '/api/v1/checklists', { name: 'Boiler inspection', items: ITEMS });
  const answerRecordIds: string[] = [];
  for (let n = 0; n < ANSWER_RECORDS; n++) answerRecordIds.push((await created(baseUrl, tenant, '/api/v1/records', { ...JSON.parse(recordBody(categoryId, n)), checklistIds: [checklistId] })).id);
  return { categoryId, checklistId, answerRecordIds };
}

/** The answer of one item, as a client sends it. */
export function answerBody(key: string): string {
  return JSON.stringify({ value: ANSWERS[key] });
}

/**
 * `count` work orders created with an assignee and started (IN_PROGRESS), with the checklist every
 * item of it answered when `withChecklist`: ready to complete. Each connection makes one at a time,
 * its requests in turn; only those whose every request succeeded are answered.
 */
export async function prepareCompletions(url: string | string[], tenant: Tenant, fixture: ChecklistsFixture, count: number, withChecklist: boolean): Promise<string[]> {
  const ready: string[] = [];
  const extra = withChecklist ? { assignee: 'Technician 3', checklistIds: [fixture.checklistId] } : { assignee: 'Technician 3' };
  const steps = withChecklist ? ITEMS.map((item) => item.key) : [];
  const last = steps.length;
  const succeeded = (context: Record<string, unknown>, step: number) => {
    context.ok = Number(context.ok ?? 0) + 1;
    if (step === last && context.ok === last + 2) ready.push(String(context.id));
  };
  await runLoad({
    url,
    connections: 10,
    amount: count * (2 + steps.length),
    requests: [
      {
        method: 'POST',
        path: '/api/v1/records',
        headers: tenant.headers,
        body: recordBody(fixture.categoryId, 3, extra),
        onResponse: (status, body, context) => {
          context.ok = 0;
          context.id = status === 201 ? (JSON.parse(body) as { id: string }).id : undefined;
          if (status === 201) context.ok = 1;
        },
      },
      {
        method: 'POST',
        setupRequest: (request, context) => (context.id ? { ...request, path: `/api/v1/records/${String(context.id)}/start`, headers: tenant.headers, body: '{}' } : null),
        onResponse: (status, _body, context) => {
          if (status === 200) succeeded(context, 0);
        },
      },
      ...steps.map(
        (key, i): RequestSpec => ({
          method: 'PUT',
          setupRequest: (request, context) =>
            context.id ? { ...request, path: `/api/v1/records/${String(context.id)}/checklists/${fixture.checklistId}/items/${key}`, headers: tenant.headers, body: answerBody(key) } : null,
          onResponse: (status, _body, context) => {
            if (status >= 200 && status < 300) succeeded(context, i + 1);
          },
        }),
      ),
    ],
  });
  return ready;
}
