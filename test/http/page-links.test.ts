// Every list answers an RFC 8288 Link field with its first, previous, next and last pages, as
// GitHub does, beside the body's offset: the request's own target, other parameters kept.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { pageLinks } from '../../src/http/pagination.js';
import { createWorkOrder, itOnEachDatabase, recordBody, seedCategory, type Tenant } from '../helpers/test-app.js';
import { dispatchAll } from '../helpers/event-feed.js';

/** The link-values of a `Link` field, by relation. */
function linksOf(field: unknown): Record<string, string> {
  const values = String(field ?? '').split(/,\s*(?=<)/).filter(Boolean);
  return Object.fromEntries(
    values.map((value) => {
      const match = /^<([^>]*)>; rel="([^"]+)"$/.exec(value);
      assert.ok(match, `a link-value: ${value}`);
      return [match[2]!, match[1]!];
    }),
  );
}

/** Follows `next` from `url` to the last page: every item's id, and the pages visited. */
async function walk(tenant: Tenant, url: string, key: string): Promise<{ ids: string[]; pages: LightMyRequestResponse[] }> {
  const ids: string[] = [];
  const pages: LightMyRequestResponse[] = [];
  for (let next: string | undefined = url; next !== undefined; ) {
    const page = await tenant.request({ method: 'GET', url: next });
    assert.equal(page.statusCode, 200, page.body);
    pages.push(page);
    ids.push(...(page.json()[key] as { id: string }[]).map((item) => item.id));
    next = linksOf(page.headers.link).next;
    assert.ok(pages.length <= 20, 'the links end');
  }
  return { ids, pages };
}

describe('the Link field of list answers', () => {
  it('names the first, previous, next and last pages, counted from offset 0 in steps of limit', () => {
    const links = (target: string, total: number, limit: number, offset: number) => linksOf(pageLinks(target, total, { limit, offset }).join(', '));
    assert.deepEqual(links('/api/v1/assets?status=ACTIVE&limit=10', 25, 10, 10), {
      first: '/api/v1/assets?status=ACTIVE&limit=10&offset=0',
      prev: '/api/v1/assets?status=ACTIVE&limit=10&offset=0',
      next: '/api/v1/assets?status=ACTIVE&limit=10&offset=20',
      last: '/api/v1/assets?status=ACTIVE&limit=10&offset=20',
    });
    // No prev on the first page, no next on the last; an empty list's only page is the first and the last.
    assert.deepEqual(Object.keys(links('/api/v1/assets', 25, 10, 0)), ['first', 'next', 'last']);
    assert.deepEqual(Object.keys(links('/api/v1/assets?offset=20&limit=10', 25, 10, 20)), ['first', 'prev', 'last']);
    assert.deepEqual(links('/api/v1/assets', 0, 50, 0), { first: '/api/v1/assets?limit=50&offset=0', last: '/api/v1/assets?limit=50&offset=0' });
    assert.deepEqual(links('/api/v1/assets', 20, 10, 10).last, '/api/v1/assets?limit=10&offset=10');
    // From past the end, prev is the last page that holds anything; from an offset off the steps, prev stops at 0.
    assert.equal(links('/api/v1/assets?offset=500', 25, 10, 500).prev, '/api/v1/assets?limit=10&offset=20');
    assert.equal(links('/api/v1/assets?offset=5', 25, 10, 5).prev, '/api/v1/assets?limit=10&offset=0');
    assert.equal(links('/api/v1/assets?offset=5', 25, 10, 5).next, '/api/v1/assets?limit=10&offset=15');
  });

  it('keeps the other parameters as sent, in their order, and replaces every limit and offset', () => {
    const [first] = pageLinks('/api/v1/events?type=record.created%2Crecord.closed&limit=5&after=12&offset=5&%6Cimit=7&q=a+b', 30, { limit: 5, offset: 5 });
    assert.equal(first, '</api/v1/events?type=record.created%2Crecord.closed&after=12&q=a+b&limit=5&offset=0>; rel="first"');
    // What cannot stand between < and > is percent-encoded.
    assert.equal(pageLinks('/api/v1/assets?q=<b>"x"', 1, { limit: 50, offset: 0 })[0], '</api/v1/assets?q=%3Cb%3E%22x%22&limit=50&offset=0>; rel="first"');
  });

  itOnEachDatabase('pages a filtered work-order list: following next reads every match once, the filter kept', async ({ newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const open: string[] = [];
    for (let i = 0; i < 5; i++) open.push((await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId) })).json().id);
    await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { assignee: 'Bob' }) });
    const { ids, pages } = await walk(tenant, `/api/v1/records?status=OPEN&categoryId=${categoryId}&limit=2`, 'records');
    assert.deepEqual(ids, [...open].reverse());
    assert.equal(pages.length, 3);
    assert.deepEqual(linksOf(pages[1]!.headers.link), {
      first: `/api/v1/records?status=OPEN&categoryId=${categoryId}&limit=2&offset=0`,
      prev: `/api/v1/records?status=OPEN&categoryId=${categoryId}&limit=2&offset=0`,
      next: `/api/v1/records?status=OPEN&categoryId=${categoryId}&limit=2&offset=4`,
      last: `/api/v1/records?status=OPEN&categoryId=${categoryId}&limit=2&offset=4`,
    });
    assert.equal(pages[1]!.json().offset, 2);
    assert.equal(linksOf(pages[2]!.headers.link).next, undefined);
    // A refused request is no list: no links.
    assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/records?limit=500' })).headers.link, undefined);
  });

  itOnEachDatabase('pages categories, a work order’s comments, an asset’s work orders and the event feed the same way', async ({ newTenant, context }) => {
    const tenant = await newTenant();
    for (let i = 0; i < 3; i++) await seedCategory(tenant);
    const categories = await walk(tenant, '/api/v1/categories?limit=2', 'categories');
    assert.equal(categories.ids.length, 3);
    assert.equal(categories.pages.length, 2);

    const recordId = await createWorkOrder(tenant);
    for (let i = 0; i < 3; i++) await tenant.request({ method: 'POST', url: `/api/v1/records/${recordId}/comments`, payload: { body: `Note ${i}` } });
    const comments = await walk(tenant, `/api/v1/records/${recordId}/comments?limit=1`, 'comments');
    assert.equal(comments.ids.length, 3);
    assert.equal(linksOf(comments.pages[0]!.headers.link).last, `/api/v1/records/${recordId}/comments?limit=1&offset=2`);

    const asset = (await tenant.request({ method: 'POST', url: '/api/v1/assets', payload: { name: 'Boiler', tag: 'B-1' } })).json();
    const categoryId = await seedCategory(tenant);
    for (let i = 0; i < 3; i++) await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { assetId: asset.id, priority: i === 0 ? 'HIGH' : 'LOW' }) });
    const assetRecords = await walk(tenant, `/api/v1/assets/${asset.id}/records?status=OPEN&limit=2`, 'records');
    assert.equal(assetRecords.ids.length, 3);

    await dispatchAll(context);
    const feed = await walk(tenant, '/api/v1/events?type=record.created&limit=2', 'events');
    assert.equal(feed.ids.length, 4);
    assert.equal(linksOf(feed.pages[0]!.headers.link).next, '/api/v1/events?type=record.created&limit=2&offset=2');
  });
});
