import assert from 'node:assert/strict';
import type { TestApp, Tenant } from '../helpers/test-app.js';
import { createWorkOrder } from '../helpers/test-app.js';
import { ALL_SCOPES } from '../../src/features.js';
import type { Scope } from '../../src/keys/scopes.js';

/** A tenant of an organization whose amounts are in `currency`, with a key holding `scopes` (all by default). */
export async function tenantIn(t: TestApp, currency: string, scopes: readonly Scope[] = ALL_SCOPES): Promise<Tenant> {
  const org = await t.context.organizations.create(`Org ${currency} ${Math.random().toString(36).slice(2, 8)}`, { currency });
  const { apiKey, key } = await t.context.apiKeys.create({ orgId: org.id, name: 'test', scopes: [...scopes], createdBy: 'test' });
  return { orgId: org.id, keyId: apiKey.id, key, request: (opts) => t.app.inject({ ...opts, headers: { authorization: `Bearer ${key}`, ...opts.headers } }) };
}

export async function post(tenant: Tenant, url: string, payload: unknown, status = 201): Promise<Record<string, any>> {
  const response = await tenant.request({ method: 'POST', url, payload: payload as never });
  assert.equal(response.statusCode, status, `${url}: ${response.body}`);
  return response.json();
}

export async function get(tenant: Tenant, url: string): Promise<Record<string, any>> {
  const response = await tenant.request({ method: 'GET', url });
  assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
  return response.json();
}

/** Two storerooms, a part with stock in both, and a work order. */
export async function stockedWorkOrder(tenant: Tenant, options: { unitCost?: string; stock?: [string, string]; reorderPoint?: string } = {}) {
  const main = await post(tenant, '/api/v1/locations', { name: 'Main storeroom' });
  const van = await post(tenant, '/api/v1/locations', { name: 'Van 2' });
  const part = await post(tenant, '/api/v1/parts', {
    sku: `CART-${Math.random().toString(36).slice(2, 8)}`,
    name: 'Cartridge 35 mm',
    unit: 'pcs',
    unitCost: { amount: options.unitCost ?? '15.90', currency: 'EUR' },
    ...(options.reorderPoint ? { reorderPoint: options.reorderPoint } : {}),
  });
  const [inMain, inVan] = options.stock ?? ['20', '5'];
  if (inMain !== '0') await post(tenant, `/api/v1/parts/${part.id}/movements`, { type: 'receive', locationId: main.id, quantity: inMain });
  if (inVan !== '0') await post(tenant, `/api/v1/parts/${part.id}/movements`, { type: 'receive', locationId: van.id, quantity: inVan });
  const recordId = await createWorkOrder(tenant);
  return { main: main.id as string, van: van.id as string, part: part.id as string, recordId };
}
