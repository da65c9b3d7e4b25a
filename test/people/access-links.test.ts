import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { itOnEachDatabase, recordBody, seedCategory, TestClock, type TestApp, type Tenant } from '../helpers/test-app.js';
import { sampleFiles } from '../helpers/files.js';
import { create, jobPageClient, seeOther } from './job-page-helpers.js';

/** A vendor, a work order assigned to it, and a link for it. */
async function jobFor(t: TestApp, tenant: Tenant, expiresIn = 'P7D') {
  const categoryId = await seedCategory(tenant);
  const acme = await create(tenant, '/api/v1/vendors', { name: 'Acme Plumbing', trades: ['Plumbing'] });
  const leak = await create(tenant, '/api/v1/records', recordBody(categoryId, { description: 'Leak under the sink', assignees: [{ type: 'vendor', id: acme.id }] }));
  const link = await create(tenant, `/api/v1/records/${leak.id}/access-links`, { vendorId: acme.id, expiresIn });
  const path = new URL(link.url).pathname;
  const { page, form } = jobPageClient(t, path);
  return { acme, leak, link, path, page, form, categoryId };
}

describe('access links and the job page', () => {
  itOnEachDatabase('lets a vendor start, comment, upload a photo and complete with it, each as link:lnk_… with its name', async (t) => {
    const tenant = await t.newTenant();
    const { acme, leak, link, path, page, form } = await jobFor(t, tenant);
    assert.match(link.token, /^wol_[A-Za-z0-9_-]{43}$/);
    assert.equal(link.url, `${t.config.publicUrl}/job/${link.token}`);
    assert.deepEqual([link.holder, link.state], [{ type: 'vendor', id: acme.id, name: 'Acme Plumbing' }, 'active']);

    const first = await page();
    assert.equal(first.statusCode, 200);
    assert.match(first.headers['content-type'] as string, /^text\/html/);
    assert.match(first.body, /Leak under the sink/);
    assert.match(first.body, /Job for Acme Plumbing/);
    assert.match(first.headers['content-security-policy'] as string, /script-src 'self'/);
    assert.equal(first.headers['referrer-policy'], 'no-referrer');
    assert.equal(first.headers['cache-control'], 'no-store');
    assert.equal(first.headers['x-frame-options'], 'DENY');

    seeOther(await form('/start', {}), path);
    seeOther(await form('/comments', { body: 'Valve replaced, testing now.' }), path);
    const photo = await page('/photos?filename=under-sink.jpg', { method: 'POST', payload: sampleFiles.jpeg(), headers: { 'content-type': 'image/jpeg' } });
    assert.equal(photo.statusCode, 201, photo.body);
    const shown = await page(`/photos/${photo.json().id}`);
    assert.deepEqual([shown.statusCode, shown.headers['content-type']], [200, 'image/jpeg']);
    assert.match((await page()).body, new RegExp(`/photos/${photo.json().id}`));
    seeOther(await form('/complete', { resolutionNotes: 'Replaced the trap and the valve.', evidence: [photo.json().id] }), path);

    const record = (await tenant.request({ method: 'GET', url: `/api/v1/records/${leak.id}` })).json();
    assert.deepEqual([record.status, record.resolutionNotes], ['COMPLETED', 'Replaced the trap and the valve.']);
    const history = (await tenant.request({ method: 'GET', url: `/api/v1/records/${leak.id}/events` })).json().events as { action: string; actor: unknown; data: Record<string, any> }[];
    const byLink = history.filter((entry) => (entry.actor as { type: string }).type === 'link');
    assert.deepEqual(byLink.map((entry) => entry.action), ['start', 'commented', 'attachment_added', 'complete']);
    for (const entry of byLink) assert.deepEqual(entry.actor, { type: 'link', id: link.id, name: 'Acme Plumbing' });
    assert.equal(history.at(-1)!.data.evidence[0].attachmentId, photo.json().id);
    const [comment] = (await tenant.request({ method: 'GET', url: `/api/v1/records/${leak.id}/comments` })).json().comments;
    assert.deepEqual(comment.author, { keyId: link.id, name: 'Acme Plumbing' });
    const listed = (await tenant.request({ method: 'GET', url: `/api/v1/records/${leak.id}/access-links` })).json();
    assert.equal(listed.total, 1);
    assert.equal(listed.accessLinks[0].token, undefined, 'never listed with its token');
    assert.ok(listed.accessLinks[0].lastUsedAt);

    // Done: the page shows the outcome, and takes nothing more.
    const after = await page();
    assert.match(after.body, /Nothing more can be done through this link/);
    assert.doesNotMatch(after.body, /<form/);
    assert.equal((await form('/comments', { body: 'One more thing' })).statusCode, 409);
  });

  itOnEachDatabase('is a narrow capability: one work order, no API key, no other id in any URL form', async (t) => {
    const tenant = await t.newTenant();
    const { leak, link, page } = await jobFor(t, tenant);
    const other = await create(tenant, '/api/v1/records', recordBody(await seedCategory(tenant)));
    const theirs = await tenant.request({ method: 'POST', url: `/api/v1/records/${other.id}/attachments?filename=x.jpg`, payload: sampleFiles.jpeg(), headers: { 'content-type': 'image/jpeg' } });
    const stranger = await t.newTenant();
    const strangerRecord = await create(stranger, '/api/v1/records', recordBody(await seedCategory(stranger)));

    for (const url of [`/api/v1/records/${leak.id}`, '/api/v1/records', `/api/v1/records/${leak.id}/access-links`]) {
      const answer = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${link.token}` } });
      assert.deepEqual([answer.statusCode, answer.json().code], [401, 'unauthenticated'], url);
    }
    for (const suffix of [`/photos/${theirs.json().id}`, '/photos/file_01JD3Q4W8Y6V3C0M2ZP4K7N9XA', `/records/${other.id}`, `/${other.id}`, `/${strangerRecord.id}/start`, '/photos']) {
      const answer = await page(suffix);
      assert.equal(answer.statusCode, 404, suffix);
      assert.match(answer.body, /This link does not work/, suffix);
    }
    assert.equal((await t.app.inject({ method: 'GET', url: `/job/${other.id}` })).statusCode, 404);
    // The same page for a token that never existed, one a character off, and a malformed one.
    const off = link.token.slice(0, -1) + (link.token.endsWith('A') ? 'B' : 'A');
    const pages = await Promise.all([`/job/wol_${'x'.repeat(43)}`, `/job/${off}`, '/job/nonsense'].map((url) => t.app.inject({ method: 'GET', url })));
    assert.deepEqual(new Set(pages.map((answer) => `${answer.statusCode} ${answer.body}`)).size, 1);
    assert.equal(pages[0]!.statusCode, 404);
    // A cross-site form post is refused.
    const crossSite = await page('/start', { method: 'POST', payload: '', headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'cross-site' } });
    assert.equal(crossSite.statusCode, 403);
  });

  itOnEachDatabase('stops working when revoked, expired, or when its vendor is deactivated, and lives at most P90D', async (t) => {
    const tenant = await t.newTenant();
    const { acme, leak, link, page } = await jobFor(t, tenant, 'P1D');
    assert.equal((await page()).statusCode, 200);
    const tooLong = await tenant.request({ method: 'POST', url: `/api/v1/records/${leak.id}/access-links`, payload: { vendorId: acme.id, expiresIn: 'P91D' } });
    assert.deepEqual([tooLong.statusCode, tooLong.json().errors[0].field], [400, 'body.expiresIn']);
    assert.equal((await tenant.request({ method: 'POST', url: `/api/v1/records/${leak.id}/access-links`, payload: { vendorId: acme.id, personId: 'per_x' } })).statusCode, 400);
    assert.equal((await tenant.request({ method: 'POST', url: `/api/v1/records/${leak.id}/access-links`, payload: { personId: 'per_missing' } })).statusCode, 422);
    const ninety = await create(tenant, `/api/v1/records/${leak.id}/access-links`, { vendorId: acme.id, expiresIn: 'P90D' });
    assert.equal(Date.parse(ninety.expiresAt) - Date.parse(ninety.createdAt), 90 * 86_400_000);

    await tenant.request({ method: 'PATCH', url: `/api/v1/vendors/${acme.id}`, payload: { active: false } });
    assert.equal((await page()).statusCode, 404, 'its vendor deactivated');
    await tenant.request({ method: 'PATCH', url: `/api/v1/vendors/${acme.id}`, payload: { active: true } });
    assert.equal((await page()).statusCode, 200);
    assert.equal((await tenant.request({ method: 'DELETE', url: `/api/v1/records/${leak.id}/access-links/${link.id}` })).statusCode, 204);
    assert.equal((await page()).statusCode, 404, 'revoked');
    assert.equal((await tenant.request({ method: 'DELETE', url: `/api/v1/records/${leak.id}/access-links/${link.id}` })).statusCode, 204, 'revoking again changes nothing');
    const states = (await tenant.request({ method: 'GET', url: `/api/v1/records/${leak.id}/access-links` })).json().accessLinks.map((l: { state: string }) => l.state);
    assert.deepEqual(states, ['active', 'revoked']);
  });

  itOnEachDatabase('expires at its expiresAt', async (t) => {
    const tenant = await t.newTenant();
    const { page } = await jobFor(t, tenant, 'PT1H');
    assert.equal((await page()).statusCode, 200);
    (t.context.clock as TestClock).advance(3_600_001);
    assert.equal((await page()).statusCode, 404);
  }, { clock: new TestClock() });

  itOnEachDatabase('shows a closed or cancelled work order’s final state read-only', async (t) => {
    const tenant = await t.newTenant();
    const { leak, page, form } = await jobFor(t, tenant);
    assert.equal((await tenant.request({ method: 'POST', url: `/api/v1/records/${leak.id}/cancel`, payload: { reason: 'Duplicate' } })).statusCode, 200);
    const shown = await page();
    assert.equal(shown.statusCode, 200);
    assert.match(shown.body, /Cancelled/);
    assert.doesNotMatch(shown.body, /<form/);
    assert.equal((await form('/start', {})).statusCode, 409);
    assert.equal((await page('/photos?filename=a.jpg', { method: 'POST', payload: sampleFiles.jpeg(), headers: { 'content-type': 'image/jpeg' } })).statusCode, 409);
  });

  itOnEachDatabase('takes photos without the page’s script, as the browser sends the form itself: all of them, or none', async (t) => {
    const tenant = await t.newTenant();
    const { leak, path, page } = await jobFor(t, tenant);
    const multipart = async (files: { name: string; type: string; bytes: Buffer }[]) => {
      const body = new FormData();
      for (const file of files) body.append('photo', new Blob([new Uint8Array(file.bytes)], { type: file.type }), file.name);
      const encoded = new Request('http://job.invalid/', { method: 'POST', body });
      return page('/photos', { method: 'POST', payload: Buffer.from(await encoded.arrayBuffer()), headers: { 'content-type': encoded.headers.get('content-type')! } });
    };
    const stored = async () => (await tenant.request({ method: 'GET', url: `/api/v1/records/${leak.id}/attachments` })).json().attachments.map((file: { filename: string }) => file.filename);

    seeOther(await multipart([{ name: 'valve.jpg', type: 'image/jpeg', bytes: sampleFiles.jpeg() }, { name: 'trap.png', type: 'image/png', bytes: sampleFiles.png() }]), path);
    assert.deepEqual((await stored()).sort(), ['trap.png', 'valve.jpg']);
    assert.match((await page()).body, /alt="Photo trap\.png"/);

    // A file that is not what it says, beside a good one: the page says why, and neither is kept.
    const refused = await multipart([{ name: 'ok.jpg', type: 'image/jpeg', bytes: sampleFiles.jpeg() }, { name: 'fake.jpg', type: 'image/jpeg', bytes: Buffer.from('not a picture at all') }]);
    assert.equal(refused.statusCode, 415, refused.body);
    assert.match(refused.headers['content-type'] as string, /^text\/html/);
    assert.match(refused.body, /class="message error"/);
    // Eleven at once is over the form's limit of ten.
    const eleven = await multipart(Array.from({ length: 11 }, (_, n) => ({ name: `p${n}.jpg`, type: 'image/jpeg', bytes: sampleFiles.jpeg() })));
    assert.equal(eleven.statusCode, 413, eleven.body);
    assert.match(eleven.body, /At most 10 files/);
    // No file chosen, and a body cut off in the middle.
    assert.equal((await multipart([{ name: '', type: 'application/octet-stream', bytes: Buffer.alloc(0) }])).statusCode, 400);
    const cut = await page('/photos', { method: 'POST', payload: '--xyz\r\ncontent-disposition: form-data; name="photo"; filename="a.jpg"\r\ncontent-type: image/jpeg\r\n\r\nabc', headers: { 'content-type': 'multipart/form-data; boundary=xyz' } });
    assert.equal(cut.statusCode, 400, cut.body);
    assert.match(cut.body, /not valid multipart\/form-data/);
    assert.deepEqual((await stored()).sort(), ['trap.png', 'valve.jpg'], 'nothing refused was kept');
  });

  itOnEachDatabase('spends a budget per link and per client address, answering 429 with Retry-After', async (t) => {
    const tenant = await t.newTenant();
    const { page } = await jobFor(t, tenant);
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await page());
    assert.deepEqual(answers.map((answer) => answer.statusCode), [200, 200, 200, 429]);
    assert.ok(Number(answers[3]!.headers['retry-after']) > 0);
    // Another link of the same address: the address still has budget (5), the link its own.
    const second = await jobFor(t, tenant);
    assert.equal((await second.page()).statusCode, 200);
    // Unknown tokens spend the address's budget too.
    const guesses = [];
    for (let i = 0; i < 3; i++) guesses.push((await t.app.inject({ method: 'GET', url: `/job/wol_${String(i).repeat(43)}` })).statusCode);
    assert.deepEqual(guesses, [404, 429, 429]);
  }, { env: { WO_JOB_PAGE_REQUESTS_PER_LINK: '3', WO_JOB_PAGE_REQUESTS_PER_ADDRESS: '6' } });
});
