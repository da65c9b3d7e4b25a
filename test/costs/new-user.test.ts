// docs/costs.md's walk-through, step by step as a new integrator follows it: the same requests, the
// same amounts. If this test changes, the walk-through changes with it.
import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { Scope } from '../../src/keys/scopes.js';
import { createWorkOrder, itOnEachDatabase } from '../helpers/test-app.js';
import { get, post, tenantIn } from './helpers.js';

const eur = (amount: string) => ({ amount, currency: 'EUR' });
// The scopes the walk-through's key is made with: the test has no more.
const WALK_THROUGH_SCOPES = /--scopes (\S+) --json/.exec(readFileSync('docs/costs.md', 'utf8').split('## Walk-through')[1]!)![1]!.split(',') as Scope[];

describe('docs/costs.md, as a new integrator follows it', () => {
  itOnEachDatabase('an organization in EUR, stock received into two storerooms, 1 h 20 min at 33.33 €/h, two parts and an invoice on a job: totals exact to the cent, four lines to post', async (t) => {
    // `wo orgs create "Harbour Estates" --currency EUR`, and the key made there.
    const tenant = await tenantIn(t, 'EUR', WALK_THROUGH_SCOPES);

    // 1. Two storerooms, two parts, stock received into both.
    const main = await post(tenant, '/api/v1/locations', { name: 'Main storeroom' });
    const van = await post(tenant, '/api/v1/locations', { name: 'Van 2' });
    const cartridge = await post(tenant, '/api/v1/parts', { sku: 'CART-35-CER', name: 'Cartridge 35 mm, ceramic', unit: 'pcs', unitCost: eur('15.90'), reorderPoint: '5' });
    const orings = await post(tenant, '/api/v1/parts', { sku: 'ORING-12', name: 'O-ring 12 mm', unit: 'pcs', unitCost: eur('0.35') });
    for (const [part, location, quantity] of [[cartridge, main, '20'], [cartridge, van, '4'], [orings, main, '100']] as const) {
      const receipt = await post(tenant, `/api/v1/parts/${part.id}/movements`, { type: 'receive', locationId: location.id, quantity });
      assert.deepEqual([receipt.type, receipt.quantity, receipt.unitCost], ['receive', quantity, part.unitCost]);
    }

    // 2. The technician and their rate; the job.
    const sam = await post(tenant, '/api/v1/people', { name: 'Sam Okafor', hourlyRate: eur('33.33') });
    const recordId = await createWorkOrder(tenant);

    // 3. 1 h 20 min of labor, priced at Sam's rate: 80 × 33.33 ÷ 60 = 44.44 exactly.
    const labor = await post(tenant, `/api/v1/records/${recordId}/labor`, { personId: sam.id, minutes: 80, note: 'Replaced the cartridge' });
    assert.deepEqual([labor.rate, labor.cost], [eur('33.33'), eur('44.44')]);

    // 4. Two parts: a cartridge from the van, three O-rings from the main storeroom.
    const fromVan = await post(tenant, `/api/v1/records/${recordId}/parts`, { partId: cartridge.id, locationId: van.id, quantity: '1' });
    const fromMain = await post(tenant, `/api/v1/records/${recordId}/parts`, { partId: orings.id, locationId: main.id, quantity: '3' });
    assert.deepEqual([fromVan.amount, fromMain.amount], [eur('15.90'), eur('1.05')]);

    // 5. The contractor's invoice.
    const invoice = await post(tenant, `/api/v1/records/${recordId}/costs`, { description: 'Harbour Plumbing invoice 2027-118', amount: eur('120.00'), invoiceRef: '2027-118' });

    // The work order's totals: sums of its lines, exact to the cent.
    const record = await get(tenant, `/api/v1/records/${recordId}`);
    assert.deepEqual(record.costs, { labor: eur('44.44'), parts: eur('16.95'), other: eur('120.00'), total: eur('181.39') });
    assert.equal(record.laborMinutes, 80);
    const stock = async (partId: string) => Object.fromEntries((await get(tenant, `/api/v1/parts/${partId}/stock`)).stock.map((s: { locationId: string; onHand: string }) => [s.locationId, s.onHand]));
    assert.deepEqual(await stock(cartridge.id), { [main.id]: '20', [van.id]: '3' });
    assert.deepEqual(await stock(orings.id), { [main.id]: '97' });

    // What the ERP finds to post: four lines, whose amounts add up to the total.
    const todo = await get(tenant, '/api/v1/cost-lines?posted=false');
    const byId = (a: string[], b: string[]) => (a[0]! < b[0]! ? -1 : 1);
    assert.deepEqual(
      todo.costLines.map((line: { id: string; kind: string; amount: { amount: string } }) => [line.id, line.kind, line.amount.amount]).sort(byId),
      [[labor.id, 'labor', '44.44'], [fromVan.id, 'part', '15.90'], [fromMain.id, 'part', '1.05'], [invoice.id, 'other', '120.00']].sort(byId),
    );
  });
});
