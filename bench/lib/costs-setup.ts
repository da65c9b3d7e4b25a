// What the costs part (bench/parts/costs.ts) sets up through the API before it seeds and measures:
// an organization in EUR, a storeroom with parts in stock, work orders to issue them on, one line of
// each kind the seeded lines are cloned from, and a work order carrying 50 lines for the totals.
import { randomUUID } from 'node:crypto';
import { runCli } from './processes.js';
import { BENCH_SCOPES, callApi, createCategory, recordBody, type Tenant } from './tenant.js';

export const COSTS_SCOPES = [...BENCH_SCOPES, 'costs:read', 'costs:write', 'parts:read', 'parts:write', 'locations:read', 'locations:write'];
export const CURRENCY = 'EUR';

/** How many parts and work orders the issue load spreads over, so that concurrent issues rarely wait on one stock row or one work order. */
export const ISSUE_PARTS = 20;
export const ISSUE_RECORDS = 200;
/** Units received per part: far more than any run issues. */
const RECEIVED = '1000000';

/** The organization (in EUR) and a key with the costs, parts and locations scopes, made with the `wo` CLI as createTenant does. */
export async function createCostsTenant(dataDir: string, env: Record<string, string> = {}): Promise<Tenant> {
  const org = JSON.parse(await runCli(dataDir, ['orgs', 'create', `bench-costs-${randomUUID().slice(0, 8)}`, '--currency', CURRENCY, '--json'], env)) as { id: string };
  const key = JSON.parse(await runCli(dataDir, ['keys', 'create', '--org', org.id, '--scopes', COSTS_SCOPES.join(','), '--name', 'bench', '--json'], env)) as { key: string };
  const authorization = `Bearer ${key.key}`;
  return { orgId: org.id, key: key.key, headers: { authorization, 'content-type': 'application/json' }, readHeaders: { authorization } };
}

async function created<T = { id: string }>(baseUrl: string, tenant: Tenant, path: string, body: unknown): Promise<T> {
  const answer = await callApi<T>(baseUrl, tenant, 'POST', path, body);
  if (answer.status !== 201 && answer.status !== 200) throw new Error(`POST ${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

const eur = (amount: string) => ({ amount, currency: CURRENCY });

/** The three kinds of line, as a client sends them: 1 h 20 min at 33.33 €/h, one cartridge, an invoice. */
function lineRequest(kind: number, partId: string, locationId: string): { path: string; body: unknown } {
  if (kind === 0) return { path: 'labor', body: { minutes: 80, rate: eur('33.33'), category: 'regular' } };
  if (kind === 1) return { path: 'parts', body: { partId, locationId, quantity: '1' } };
  return { path: 'costs', body: { description: 'Harbour Plumbing invoice 2027-118', amount: eur('120.00'), invoiceRef: '2027-118' } };
}

export interface CostsFixture {
  categoryId: string;
  locationId: string;
  partIds: string[];
  /** The work orders the issue load goes to. */
  issueRecordIds: string[];
  /** The work order holding one line of each kind (labor, part, other), which the seeder clones. */
  templateRecordId: string;
  /** A work order with 50 lines made through the API, and one with none. */
  fiftyLinesRecordId: string;
  noLinesRecordId: string;
}

/** Everything the part needs made through the API, on a running service; then every line made here is posted, so `posted=false` holds only the seeded ones. */
export async function setUpCosts(baseUrl: string, tenant: Tenant): Promise<CostsFixture> {
  const categoryId = await createCategory(baseUrl, tenant);
  const { id: locationId } = await created(baseUrl, tenant, '/api/v1/locations', { name: 'Main storeroom' });
  const partIds: string[] = [];
  for (let p = 0; p < ISSUE_PARTS; p++) {
    const { id } = await created(baseUrl, tenant, '/api/v1/parts', { sku: `CART-${p}`, name: `Cartridge 35 mm, type ${p}`, unit: 'pcs', unitCost: eur('15.90') });
    await created(baseUrl, tenant, `/api/v1/parts/${id}/movements`, { type: 'receive', locationId, quantity: RECEIVED });
    partIds.push(id);
  }
  const newRecord = async (n: number) => (await created(baseUrl, tenant, '/api/v1/records', JSON.parse(recordBody(categoryId, n)))).id;
  const issueRecordIds: string[] = [];
  for (let from = 0; from < ISSUE_RECORDS; from += 10) issueRecordIds.push(...(await Promise.all(Array.from({ length: 10 }, (_, i) => newRecord(from + i)))));

  const lineIds: string[] = [];
  const addLine = async (recordId: string, kind: number) => {
    const { path, body } = lineRequest(kind, partIds[0]!, locationId);
    lineIds.push((await created(baseUrl, tenant, `/api/v1/records/${recordId}/${path}`, body)).id);
  };
  const templateRecordId = await newRecord(-1);
  for (let kind = 0; kind < 3; kind++) await addLine(templateRecordId, kind);
  const fiftyLinesRecordId = await newRecord(-2);
  for (let n = 0; n < 50; n++) await addLine(fiftyLinesRecordId, n % 3);
  const noLinesRecordId = await newRecord(-3);
  for (const id of lineIds) await created(baseUrl, tenant, `/api/v1/cost-lines/${id}/post`, { erpDocumentId: `ERP-SETUP-${id}` });
  return { categoryId, locationId, partIds, issueRecordIds, templateRecordId, fiftyLinesRecordId, noLinesRecordId };
}
