import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { TestClock, itOnEachDatabase, type Tenant } from '../helpers/test-app.js';
import { dispatchAll, readFeed } from '../helpers/event-feed.js';

const clock = new TestClock();
const HOUR = 3_600_000;

const LISTS = {
  assets: { create: (i: number) => ({ name: `Pump ${i}`, tag: `P-${i}-${Math.random().toString(36).slice(2, 8)}` }), edit: { name: 'Pump, serviced' } },
  locations: { create: (i: number) => ({ name: `Room ${i}` }), edit: { name: 'Room, renamed' } },
  categories: { create: (i: number) => ({ name: `Trade ${i}` }), edit: { name: 'Trade, renamed' } },
} as const;

/** The singular each list's deletion event and its payload's id are named after. */
const SINGULAR = { assets: 'asset', locations: 'location', categories: 'category' } as const;

async function create(tenant: Tenant, list: keyof typeof LISTS, i: number): Promise<{ id: string; updatedAt: string }> {
  const response = await tenant.request({ method: 'POST', url: `/api/v1/${list}`, payload: LISTS[list].create(i) });
  assert.equal(response.statusCode, 201, response.body);
  return response.json();
}

async function listIds(tenant: Tenant, list: keyof typeof LISTS, query: string): Promise<string[]> {
  const response = await tenant.request({ method: 'GET', url: `/api/v1/${list}?${query}` });
  assert.equal(response.statusCode, 200, `${query}: ${response.body}`);
  const page = response.json() as Record<string, { id: string }[]> & { total: number };
  assert.equal(page.total, page[list]!.length, 'total counts the filtered list');
  return page[list]!.map((item) => item.id);
}

describe('incremental sync of assets, locations and categories', () => {
  for (const list of Object.keys(LISTS) as (keyof typeof LISTS)[]) {
    itOnEachDatabase(
      `the ${list} list returns only what changed at or after updatedAfter, and the feed tells of deletions`,
      async ({ context, newTenant }) => {
        const tenant = await newTenant();
        const items = [await create(tenant, list, 1), await create(tenant, list, 2), await create(tenant, list, 3)];
        clock.advance(HOUR);
        const syncPoint = clock.now().toISOString();
        assert.deepEqual(await listIds(tenant, list, `updatedAfter=${syncPoint}`), [], 'nothing changed since the sync point');

        const edited = await tenant.request({ method: 'PATCH', url: `/api/v1/${list}/${items[1]!.id}`, payload: LISTS[list].edit });
        assert.equal(edited.statusCode, 200, edited.body);
        clock.advance(1000);
        const fresh = await create(tenant, list, 4);
        assert.equal((await tenant.request({ method: 'DELETE', url: `/api/v1/${list}/${items[2]!.id}` })).statusCode, 204);

        assert.deepEqual(await listIds(tenant, list, `updatedAfter=${syncPoint}`), [fresh.id, items[1]!.id]);
        assert.deepEqual(await listIds(tenant, list, `updatedAfter=${fresh.updatedAt}`), [fresh.id], 'the bound itself is included');
        const local = new Date(Date.parse(edited.json().updatedAt) + 2 * HOUR).toISOString().replace('Z', '+02:00');
        assert.deepEqual(await listIds(tenant, list, `updatedAfter=${encodeURIComponent(local)}`), [fresh.id, items[1]!.id], 'any offset is read as the same instant');

        // The deleted one is simply absent from the list; the event feed says it went.
        await dispatchAll(context);
        const deletions = await readFeed(tenant, `type=${SINGULAR[list]}.deleted`);
        assert.deepEqual(
          deletions.events.map((event) => event.payload[`${SINGULAR[list]}Id`]),
          [items[2]!.id],
        );

        for (const query of ['updatedAfter=2026-03-01', 'updatedAfter=', 'updatedAfter=yesterday', 'updatedAfter=2026-13-01T00:00:00Z']) {
          const response = await tenant.request({ method: 'GET', url: `/api/v1/${list}?${query}` });
          assert.equal(response.statusCode, 400, `${query}: ${response.body}`);
          assert.equal(response.json().code, 'validation_failed');
          assert.equal(response.json().errors[0].field, 'querystring.updatedAfter', query);
        }
      },
      { clock },
    );
  }
});
