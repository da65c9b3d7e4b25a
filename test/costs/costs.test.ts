import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { createWorkOrder, itOnEachDatabase, type TestApp } from '../helpers/test-app.js';
import { get, post, stockedWorkOrder, tenantIn } from './helpers.js';

async function eventsOf(t: TestApp, orgId: string, types: string[]): Promise<{ type: string; payload: Record<string, any> }[]> {
  const rows = await t.context.database.db.selectFrom('outbox_events').selectAll().where('org_id', '=', orgId).where('type', 'in', types).orderBy('seq').execute();
  return rows.map((row) => ({ type: row.type, payload: JSON.parse(row.payload) }));
}

describe('time, parts and costs', () => {
  itOnEachDatabase('totals 1 h 20 min at 33.33 €/h, two parts and an invoice exactly to the cent, on the work order and in its lists', async (t) => {
    const tenant = await tenantIn(t, 'EUR');
    const { main, van, part, recordId } = await stockedWorkOrder(tenant);
    const person = await post(tenant, '/api/v1/people', { name: 'Sam Okafor', hourlyRate: { amount: '33.33', currency: 'EUR' } });
    const before = await get(tenant, `/api/v1/records/${recordId}`);
    assert.deepEqual([before.costs, before.laborMinutes], [null, 0]);

    const labor = await post(tenant, `/api/v1/records/${recordId}/labor`, { personId: person.id, startedAt: '2027-03-02T08:00:00Z', endedAt: '2027-03-02T09:20:00Z' });
    assert.deepEqual([labor.minutes, labor.rate, labor.cost, labor.category], [80, { amount: '33.33', currency: 'EUR' }, { amount: '44.44', currency: 'EUR' }, 'regular']);
    const fromMain = await post(tenant, `/api/v1/records/${recordId}/parts`, { partId: part, locationId: main, quantity: '1' });
    const fromVan = await post(tenant, `/api/v1/records/${recordId}/parts`, { partId: part, locationId: van, quantity: '0.5' });
    assert.deepEqual([fromMain.amount.amount, fromVan.amount.amount, fromVan.unitCost.amount], ['15.90', '7.95', '15.90']);
    const invoice = await post(tenant, `/api/v1/records/${recordId}/costs`, { description: 'Harbour Plumbing invoice 118', amount: { amount: '120', currency: 'EUR' }, invoiceRef: '118' });
    assert.equal(invoice.id.slice(0, 4), 'cst_');

    const record = await get(tenant, `/api/v1/records/${recordId}`);
    const eur = (amount: string) => ({ amount, currency: 'EUR' });
    assert.deepEqual(record.costs, { labor: eur('44.44'), parts: eur('23.85'), other: eur('120.00'), total: eur('188.29') });
    assert.equal(record.laborMinutes, 80);
    assert.equal(record.version, before.version + 4, 'each line is a new version of the work order');
    const listed = (await get(tenant, '/api/v1/records')).records.find((r: { id: string }) => r.id === recordId);
    assert.deepEqual([listed.costs, listed.laborMinutes], [record.costs, 80]);

    const stock = await get(tenant, `/api/v1/parts/${part}/stock`);
    assert.deepEqual(stock.stock.map((s: { locationId: string; onHand: string }) => [s.locationId, s.onHand]).sort(), [[main, '19'], [van, '4.5']].sort());
    assert.deepEqual((await get(tenant, `/api/v1/records/${recordId}/labor`)).labor.map((l: { id: string }) => l.id), [labor.id]);
    assert.equal((await get(tenant, `/api/v1/records/${recordId}/parts`)).total, 2);
    assert.equal((await get(tenant, `/api/v1/records/${recordId}/costs`)).costs[0].invoiceRef, '118');
    const added = await eventsOf(t, tenant.orgId, ['record.cost_added']);
    assert.deepEqual(added.map((e) => [e.payload.kind, e.payload.amount.amount]), [['labor', '44.44'], ['part', '15.90'], ['part', '7.95'], ['other', '120.00']]);
    assert.deepEqual(Object.keys(added[0]!.payload).sort(), ['amount', 'costLineId', 'kind', 'recordId']);
  });

  itOnEachDatabase('never reprices an issued part when the part’s price changes', async (t) => {
    const tenant = await tenantIn(t, 'EUR');
    const { main, part, recordId } = await stockedWorkOrder(tenant);
    await post(tenant, `/api/v1/records/${recordId}/parts`, { partId: part, locationId: main, quantity: '2' });
    const patched = await tenant.request({ method: 'PATCH', url: `/api/v1/parts/${part}`, payload: { unitCost: { amount: '99.99', currency: 'EUR' } } });
    assert.equal(patched.statusCode, 200, patched.body);
    const lines = await get(tenant, `/api/v1/records/${recordId}/parts`);
    assert.deepEqual([lines.parts[0].unitCost.amount, lines.parts[0].amount.amount], ['15.90', '31.80']);
    assert.equal((await get(tenant, `/api/v1/records/${recordId}`)).costs.parts.amount, '31.80');
    const next = await post(tenant, `/api/v1/records/${recordId}/parts`, { partId: part, locationId: main, quantity: '1' });
    assert.equal(next.unitCost.amount, '99.99');
  });

  itOnEachDatabase('refuses floats, too many decimals and other currencies naming the field', async (t) => {
    const tenant = await tenantIn(t, 'EUR');
    const { main, part, recordId } = await stockedWorkOrder(tenant);
    const refuse = async (url: string, payload: unknown, status: number, code: string, field: string) => {
      const response = await tenant.request({ method: 'POST', url, payload: payload as never });
      assert.equal(response.statusCode, status, `${url} ${JSON.stringify(payload)}: ${response.body}`);
      assert.equal(response.json().code, code);
      assert.ok(response.json().errors.some((e: { field: string }) => e.field === field), `${field} in ${response.body}`);
    };
    await refuse(`/api/v1/records/${recordId}/costs`, { description: 'x', amount: { amount: 12.5, currency: 'EUR' } }, 400, 'validation_failed', 'body.amount.amount');
    await refuse(`/api/v1/records/${recordId}/costs`, { description: 'x', amount: { amount: '12.505', currency: 'EUR' } }, 422, 'unprocessable_entity', 'body.amount.amount');
    await refuse(`/api/v1/records/${recordId}/costs`, { description: 'x', amount: { amount: '12.50', currency: 'USD' } }, 422, 'currency_mismatch', 'body.amount.currency');
    await refuse(`/api/v1/records/${recordId}/labor`, { minutes: 30, rate: { amount: '20.001', currency: 'EUR' } }, 422, 'unprocessable_entity', 'body.rate.amount');
    await refuse(`/api/v1/records/${recordId}/labor`, { minutes: 30 }, 422, 'unprocessable_entity', 'body.rate');
    await refuse(`/api/v1/records/${recordId}/parts`, { partId: part, locationId: main, quantity: 2 }, 400, 'validation_failed', 'body.quantity');
    await refuse(`/api/v1/records/${recordId}/parts`, { partId: part, locationId: main, quantity: '1.0005' }, 400, 'validation_failed', 'body.quantity');
    await refuse('/api/v1/parts', { sku: 'X', name: 'X', unit: 'pcs', unitCost: { amount: '1.00', currency: 'GBP' } }, 422, 'currency_mismatch', 'body.unitCost.currency');
    const record = await get(tenant, `/api/v1/records/${recordId}`);
    assert.equal(record.costs, null, 'nothing refused was counted');
  });

  itOnEachDatabase('keeps stock per location from the ledger: receive, transfer, adjust, issue and return, never below zero', async (t) => {
    const tenant = await tenantIn(t, 'EUR');
    const { main, van, part, recordId } = await stockedWorkOrder(tenant, { stock: ['10', '0'], reorderPoint: '4' });
    await post(tenant, `/api/v1/parts/${part}/movements`, { type: 'transfer', locationId: main, toLocationId: van, quantity: '2.25' });
    await post(tenant, `/api/v1/parts/${part}/movements`, { type: 'adjust', locationId: main, quantity: '-0.75', note: 'count' });
    const short = await tenant.request({ method: 'POST', url: `/api/v1/parts/${part}/movements`, payload: { type: 'issue', locationId: van, quantity: '3' } });
    assert.deepEqual([short.statusCode, short.json().code, short.json().onHand, short.json().requested], [409, 'insufficient_stock', '2.25', '3']);
    const shortOnRecord = await tenant.request({ method: 'POST', url: `/api/v1/records/${recordId}/parts`, payload: { partId: part, locationId: van, quantity: '2.5' } });
    assert.deepEqual([shortOnRecord.statusCode, shortOnRecord.json().code], [409, 'insufficient_stock']);
    const line = await post(tenant, `/api/v1/records/${recordId}/parts`, { partId: part, locationId: main, quantity: '3' });
    const onHand = async () => Object.fromEntries((await get(tenant, `/api/v1/parts/${part}/stock`)).stock.map((s: { locationId: string; onHand: string }) => [s.locationId, s.onHand]));
    assert.deepEqual(await onHand(), { [main]: '4', [van]: '2.25' });
    const returned = await tenant.request({ method: 'DELETE', url: `/api/v1/records/${recordId}/parts/${line.id}` });
    assert.equal(returned.statusCode, 204, returned.body);
    assert.deepEqual(await onHand(), { [main]: '7', [van]: '2.25' });
    assert.deepEqual((await get(tenant, `/api/v1/records/${recordId}`)).costs.parts.amount, '0.00');
    const ledger = (await get(tenant, `/api/v1/parts/${part}/movements`)).movements.map((m: { type: string; quantity: string }) => `${m.type} ${m.quantity}`);
    assert.deepEqual(ledger, ['return 3', 'issue 3', 'adjust -0.75', 'transfer 2.25', 'receive 10']);
    // Main: 10 → 7.75 (transfer) → 7 (adjust) → 4 (issue, not below 4) → 7 (return), never below; the van got 2.25, below 4.
    assert.deepEqual((await eventsOf(t, tenant.orgId, ['part.below_reorder_point'])).map((e) => [e.payload.locationId, e.payload.onHand]), [[van, '2.25']]);
  });

  itOnEachDatabase('announces part.below_reorder_point once per crossing', async (t) => {
    const tenant = await tenantIn(t, 'EUR');
    const { main, part } = await stockedWorkOrder(tenant, { stock: ['6', '0'], reorderPoint: '5' });
    const move = (type: string, quantity: string) => post(tenant, `/api/v1/parts/${part}/movements`, { type, locationId: main, quantity });
    await move('issue', '1');
    await move('issue', '1');
    await move('issue', '1');
    await move('receive', '10');
    await move('issue', '9');
    const crossings = await eventsOf(t, tenant.orgId, ['part.below_reorder_point']);
    assert.deepEqual(crossings.map((e) => e.payload), [
      { partId: part, locationId: main, onHand: '4', reorderPoint: '5' },
      { partId: part, locationId: main, onHand: '4', reorderPoint: '5' },
    ]);
  });

  itOnEachDatabase('announces part.below_reorder_point once when parts issued to work orders cross it, and totals every issue', async (t) => {
    const tenant = await tenantIn(t, 'EUR');
    const { main, part, recordId } = await stockedWorkOrder(tenant, { stock: ['7', '0'], reorderPoint: '5' });
    const issue = (quantity: string, key: string) => tenant.request({ method: 'POST', url: `/api/v1/records/${recordId}/parts`, headers: { 'idempotency-key': key }, payload: { partId: part, locationId: main, quantity } });
    // 7 → 6 → 5 (at the reorder point, not below) → 4 (crosses) → 3 (already below) → 0.
    for (const [n, quantity] of ['1', '1', '1', '1', '3'].entries()) assert.equal((await issue(quantity, `issue-${n}`)).statusCode, 201);
    assert.equal((await issue('1', 'issue-5')).statusCode, 409, 'nothing left');
    const replayed = await tenant.request({ method: 'POST', url: `/api/v1/records/${recordId}/parts`, headers: { 'idempotency-key': 'issue-4' }, payload: { partId: part, locationId: main, quantity: '3' } });
    assert.equal(replayed.headers['x-idempotent-replay'], 'true');
    const crossings = await eventsOf(t, tenant.orgId, ['part.below_reorder_point']);
    assert.deepEqual(crossings.map((e) => e.payload), [{ partId: part, locationId: main, onHand: '4', reorderPoint: '5' }]);
    const stock = await get(tenant, `/api/v1/parts/${part}/stock`);
    assert.equal(stock.stock.find((s: { locationId: string }) => s.locationId === main).onHand, '0');
    const record = await get(tenant, `/api/v1/records/${recordId}`);
    assert.equal(record.costs.parts.amount, '111.30');
    assert.equal((await get(tenant, `/api/v1/records/${recordId}/parts`)).total, 5);
    assert.equal((await eventsOf(t, tenant.orgId, ['record.cost_added'])).length, 5);
  });

  itOnEachDatabase('posts a cost line once: idempotent with the same document, 409 with another, frozen, corrected by a reversing line', async (t) => {
    const tenant = await tenantIn(t, 'EUR');
    const { main, part, recordId } = await stockedWorkOrder(tenant);
    const line = await post(tenant, `/api/v1/records/${recordId}/parts`, { partId: part, locationId: main, quantity: '2' });
    await post(tenant, `/api/v1/records/${recordId}/labor`, { minutes: 45, rate: { amount: '40.00', currency: 'EUR' } });
    const unposted = await get(tenant, `/api/v1/cost-lines?posted=false&recordId=${recordId}`);
    assert.deepEqual([unposted.total, unposted.costLines.map((l: { kind: string }) => l.kind)], [2, ['part', 'labor']]);

    const posted = await post(tenant, `/api/v1/cost-lines/${line.id}/post`, { erpDocumentId: 'INV-1' }, 200);
    assert.deepEqual([posted.posted, posted.erpDocumentId], [true, 'INV-1']);
    const again = await post(tenant, `/api/v1/cost-lines/${line.id}/post`, { erpDocumentId: 'INV-1' }, 200);
    assert.deepEqual(again, posted);
    const other = await post(tenant, `/api/v1/cost-lines/${line.id}/post`, { erpDocumentId: 'INV-2' }, 409);
    assert.deepEqual([other.code, other.erpDocumentId], ['cost_line_posted', 'INV-1']);
    const deleted = await tenant.request({ method: 'DELETE', url: `/api/v1/records/${recordId}/parts/${line.id}` });
    assert.deepEqual([deleted.statusCode, deleted.json().code], [409, 'cost_line_posted']);

    const reversal = await post(tenant, `/api/v1/cost-lines/${line.id}/reverse`, undefined);
    assert.deepEqual([reversal.kind, reversal.amount.amount, reversal.quantity, reversal.reversesId, reversal.posted], ['part', '-31.80', '-2', line.id, false]);
    assert.equal((await post(tenant, `/api/v1/cost-lines/${line.id}/reverse`, undefined, 409)).code, 'conflict');
    assert.equal((await post(tenant, `/api/v1/cost-lines/${reversal.id}/reverse`, undefined, 409)).code, 'conflict');
    const record = await get(tenant, `/api/v1/records/${recordId}`);
    assert.deepEqual([record.costs.parts.amount, record.costs.labor.amount, record.costs.total.amount], ['0.00', '30.00', '30.00']);
    const stock = await get(tenant, `/api/v1/parts/${part}/stock`);
    assert.equal(stock.stock.find((s: { locationId: string }) => s.locationId === main).onHand, '20');

    const after = await get(tenant, `/api/v1/cost-lines?posted=false`);
    assert.deepEqual(after.costLines.map((l: { kind: string; reversesId: string | null }) => [l.kind, l.reversesId]), [['labor', null], ['part', line.id]]);
    const frozen = (await get(tenant, `/api/v1/cost-lines?posted=true`)).costLines;
    assert.deepEqual([frozen.length, frozen[0].id, frozen[0].amount.amount, frozen[0].updatedAt], [1, line.id, '31.80', posted.updatedAt]);
    const since = await get(tenant, `/api/v1/cost-lines?updatedAfter=${encodeURIComponent(posted.updatedAt)}`);
    assert.ok(since.costLines.every((l: { updatedAt: string }) => l.updatedAt >= posted.updatedAt));
    assert.equal((await post(tenant, `/api/v1/cost-lines/cst_nope/post`, { erpDocumentId: 'X' }, 404)).code, 'not_found');
  });

  itOnEachDatabase('keeps costs out of the completion proof, and takes invoices after completion and after closing', async (t) => {
    const tenant = await tenantIn(t, 'EUR');
    const recordId = await createWorkOrder(tenant);
    await post(tenant, `/api/v1/records/${recordId}/labor`, { minutes: 80, rate: { amount: '33.33', currency: 'EUR' } });
    await post(tenant, `/api/v1/records/${recordId}/assign`, { assignee: 'Sam Okafor' }, 200);
    await post(tenant, `/api/v1/records/${recordId}/start`, {}, 200);
    await post(tenant, `/api/v1/records/${recordId}/complete`, { resolutionNotes: 'Replaced the cartridge' }, 200);
    await t.context.proofs.log.sealPending();
    const bundle = await get(tenant, `/api/v1/records/${recordId}/proof`);
    const statement = JSON.parse(Buffer.from(String(bundle.jws).split('.')[1]!, 'base64url').toString('utf8'));
    assert.deepEqual([Object.hasOwn(statement.record, 'costs'), Object.hasOwn(statement.record, 'laborMinutes'), JSON.stringify(statement).includes('44.44')], [false, false, false]);

    // The contractor's invoice comes a week later, and the call-out fee after the job was closed.
    await post(tenant, `/api/v1/records/${recordId}/costs`, { description: 'Invoice 118', amount: { amount: '120.00', currency: 'EUR' } });
    await post(tenant, `/api/v1/records/${recordId}/close`, {}, 200);
    await post(tenant, `/api/v1/records/${recordId}/costs`, { description: 'Call-out fee', amount: { amount: '35.00', currency: 'EUR' } });
    const record = await get(tenant, `/api/v1/records/${recordId}`);
    assert.deepEqual([record.status, record.costs.total.amount], ['CLOSED', '199.44']);
    const after = await get(tenant, `/api/v1/records/${recordId}/proof`);
    assert.deepEqual([after.proofId, after.jws], [bundle.proofId, bundle.jws], 'the proof of the completion is not touched by costs added since');
  });

  itOnEachDatabase('answers 404 for another organization’s work order and 403 without the scopes', async (t) => {
    const tenant = await tenantIn(t, 'EUR');
    const stranger = await tenantIn(t, 'EUR');
    const { recordId } = await stockedWorkOrder(tenant);
    assert.equal((await stranger.request({ method: 'POST', url: `/api/v1/records/${recordId}/costs`, payload: { description: 'x', amount: { amount: '1', currency: 'EUR' } } })).statusCode, 404);
    assert.equal((await stranger.request({ method: 'GET', url: `/api/v1/records/${recordId}/labor` })).statusCode, 404);
    const readOnly = await t.newTenant(['records:read', 'costs:read']);
    assert.equal((await readOnly.request({ method: 'GET', url: '/api/v1/parts' })).statusCode, 403);
    assert.equal((await readOnly.request({ method: 'GET', url: '/api/v1/cost-lines' })).statusCode, 200);
  });
});
