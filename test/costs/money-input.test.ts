// Every place a client writes money refuses a float, more digits than the currency's minor unit and
// another currency than the organization's, each as a problem naming the field, and counts nothing.
import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { createWorkOrder, itOnEachDatabase } from '../helpers/test-app.js';
import { get, post, stockedWorkOrder, tenantIn } from './helpers.js';

describe('money written by a client', () => {
  itOnEachDatabase('is refused as a float (400), with too many decimals (422) or in another currency (422 currency_mismatch), naming the field, wherever it is written', async (t) => {
    const tenant = await tenantIn(t, 'EUR');
    const { main, part, recordId } = await stockedWorkOrder(tenant);
    const person = await post(tenant, '/api/v1/people', { name: 'Sam Okafor' });
    // Each place money is written: the request, and where the Money sits in its body.
    const places: { method: 'POST' | 'PATCH'; url: string; body: (money: unknown) => Record<string, unknown>; field: string }[] = [
      { method: 'POST', url: `/api/v1/records/${recordId}/labor`, body: (rate) => ({ minutes: 80, rate }), field: 'body.rate' },
      { method: 'POST', url: `/api/v1/records/${recordId}/costs`, body: (amount) => ({ description: 'Invoice', amount }), field: 'body.amount' },
      { method: 'POST', url: '/api/v1/parts', body: (unitCost) => ({ sku: 'FLT-1', name: 'Filter', unit: 'pcs', unitCost }), field: 'body.unitCost' },
      { method: 'PATCH', url: `/api/v1/parts/${part}`, body: (unitCost) => ({ unitCost }), field: 'body.unitCost' },
      { method: 'POST', url: `/api/v1/parts/${part}/movements`, body: (unitCost) => ({ type: 'receive', locationId: main, quantity: '1', unitCost }), field: 'body.unitCost' },
      { method: 'POST', url: '/api/v1/people', body: (hourlyRate) => ({ name: 'Bo', hourlyRate }), field: 'body.hourlyRate' },
      { method: 'PATCH', url: `/api/v1/people/${person.id}`, body: (hourlyRate) => ({ hourlyRate }), field: 'body.hourlyRate' },
    ];
    const wrong = [
      { money: { amount: 33.33, currency: 'EUR' }, status: 400, code: 'validation_failed', at: 'amount' },
      { money: { amount: '33.333', currency: 'EUR' }, status: 422, code: 'unprocessable_entity', at: 'amount' },
      { money: { amount: '33.33', currency: 'USD' }, status: 422, code: 'currency_mismatch', at: 'currency' },
    ];
    for (const place of places) {
      for (const { money, status, code, at } of wrong) {
        const response = await tenant.request({ method: place.method, url: place.url, payload: place.body(money) as never });
        const what = `${place.method} ${place.url} ${JSON.stringify(money)}: ${response.body}`;
        assert.equal(response.statusCode, status, what);
        assert.equal(response.json().code, code, what);
        assert.ok(response.json().errors.some((error: { field: string }) => error.field === `${place.field}.${at}`), what);
      }
    }
    assert.equal((await get(tenant, `/api/v1/records/${recordId}`)).costs, null, 'nothing refused was counted');
    assert.equal((await get(tenant, `/api/v1/parts/${part}`)).unitCost.amount, '15.90');
    assert.equal((await get(tenant, `/api/v1/parts/${part}/movements`)).total, 2, 'the two receipts of the setup only');
    assert.equal((await get(tenant, '/api/v1/people')).total, 1);
  });

  itOnEachDatabase('takes the minor unit of the organization’s currency: whole yen, and labor rounded half to even to the yen', async (t) => {
    const tenant = await tenantIn(t, 'JPY');
    const recordId = await createWorkOrder(tenant);
    const refused = await tenant.request({ method: 'POST', url: `/api/v1/records/${recordId}/costs`, payload: { description: 'Fee', amount: { amount: '1200.5', currency: 'JPY' } } });
    assert.deepEqual([refused.statusCode, refused.json().errors[0].field], [422, 'body.amount.amount']);
    // 80 min at ¥1,000/h is ¥1,333.33…: ¥1,333. 3 min at ¥1,010/h is ¥50.5: the even ¥50. 9 min at ¥1,010/h is ¥151.5: the even ¥152.
    const costs = [];
    for (const [minutes, rate] of [[80, '1000'], [3, '1010'], [9, '1010']] as const) {
      costs.push((await post(tenant, `/api/v1/records/${recordId}/labor`, { minutes, rate: { amount: rate, currency: 'JPY' } })).cost.amount);
    }
    assert.deepEqual(costs, ['1333', '50', '152']);
    await post(tenant, `/api/v1/records/${recordId}/costs`, { description: 'Fee', amount: { amount: '1200', currency: 'JPY' } });
    const record = await get(tenant, `/api/v1/records/${recordId}`);
    assert.deepEqual([record.costs.labor, record.costs.total, record.laborMinutes], [{ amount: '1535', currency: 'JPY' }, { amount: '2735', currency: 'JPY' }, 92]);
  });
});
