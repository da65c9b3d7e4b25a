// The public intake form over HTTP: a tenant's report with a photo becomes a request, and every kind of bad
// submission gets a clear 4xx and creates nothing.
import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { itOnEachDatabase, seedCategory } from '../helpers/test-app.js';
import { dispatchAll, readFeed } from '../helpers/event-feed.js';
import { pngImage } from '../helpers/png.js';
import { sampleFiles } from '../helpers/files.js';
import { countRows, createIntakeLink, formFields, postForm, solve, solvedChallenge, statusPathOf } from './intake-helpers.js';

describe('the intake form', () => {
  itOnEachDatabase('files a request with its photo, pinned to the link’s location and category, by intake:<link>', async (t) => {
    const tenant = await t.newTenant();
    const categoryId = await seedCategory(tenant);
    const location = (await tenant.request({ method: 'POST', url: '/api/v1/locations', payload: { name: 'Block B' } })).json();
    const link = await createIntakeLink(tenant, { name: 'Block B, front door', locationId: location.id, categoryId });

    const form = await t.app.inject({ method: 'GET', url: `/intake/${link.token}` });
    assert.equal(form.statusCode, 200);
    assert.match(String(form.headers['content-type']), /^text\/html/);
    const csp = String(form.headers['content-security-policy']);
    assert.match(csp, /script-src 'self'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /unsafe-inline/);
    assert.equal(form.headers['x-content-type-options'], 'nosniff');
    assert.equal(form.headers['cache-control'], 'no-store');
    assert.doesNotMatch(form.body, /<script>/, 'no inline script');
    assert.match(form.body, /Block B, front door/);

    const photo = pngImage(40, 30, (x, y) => [x * 6, y * 8, 90]);
    const answer = await postForm(t, link.token, [...formFields(await solve(form.body)), { name: 'photos', filename: 'leak.png', type: 'image/png', bytes: photo }]);
    const statusPath = statusPathOf(answer);

    const listed = (await tenant.request({ method: 'GET', url: '/api/v1/requests?channel=intake' })).json();
    assert.equal(listed.total, 1);
    const filed = listed.requests[0];
    assert.equal(filed.intakeLinkId, link.id);
    assert.equal(filed.locationId, location.id);
    assert.equal(filed.categoryId, categoryId);
    assert.equal(filed.requesterName, 'Tess Tenant');
    assert.equal(filed.address, 'Flat 4B');
    const files = (await tenant.request({ method: 'GET', url: `/api/v1/requests/${filed.id}/attachments` })).json();
    assert.equal(files.total, 1);
    assert.equal(files.attachments[0].sha256, createHash('sha256').update(photo).digest('hex'));

    const status = await t.app.inject({ method: 'GET', url: statusPath });
    assert.equal(status.statusCode, 200);
    assert.match(status.body, /aria-current="step">Received/);
    assert.match(status.body, /Water is leaking under the kitchen sink/);
    // The event an integrator follows to tell the requester.
    await dispatchAll(t.context);
    const created = (await readFeed(tenant)).events.find((event) => event.type === 'request.created' && (event.payload as { requestId: string }).requestId === filed.id);
    assert.ok(created, 'request.created is in the feed');
    assert.equal((created.payload as { request: { channel: string } }).request.channel, 'intake');

    // JSON, as a kiosk or an app sends it: the same 303, with the status page's URL in the body.
    const json = await t.app.inject({ method: 'POST', url: `/intake/${link.token}`, payload: { description: 'The lift is stuck', requesterName: 'Ivo', altcha: await solvedChallenge(t, link.token) } });
    assert.equal(json.statusCode, 303, json.body);
    assert.match(json.json().statusUrl, /\/intake\/status\/wrs_/);
    assert.equal(json.json().statusUrl, `${t.config.publicUrl}${json.headers.location}`);
  });

  itOnEachDatabase(
    'refuses every bad submission with a clear 4xx and creates nothing',
    async (t) => {
    const tenant = await t.newTenant();
    const link = await createIntakeLink(tenant);
    const photo = () => ({ name: 'photos', filename: 'p.jpg', type: 'image/jpeg', bytes: sampleFiles.jpeg() });
    const nothingCreated = async (what: string) => {
      assert.equal(await countRows(t, 'work_requests'), 0, `${what}: no request`);
      assert.equal(await countRows(t, 'attachments'), 0, `${what}: no file kept`);
    };
    const refusedPage = (answer: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number, text: RegExp) => {
      assert.equal(answer.statusCode, status, answer.body.slice(0, 300));
      assert.match(String(answer.headers['content-type']), /^text\/html/);
      assert.match(answer.body, /class="message error"/);
      assert.match(answer.body, text);
    };

    refusedPage(await postForm(t, link.token, formFields('')), 422, /proof-of-work is missing/);
    refusedPage(await postForm(t, link.token, formFields(Buffer.from('{"algorithm":"SHA-256","number":1}').toString('base64'))), 422, /proof-of-work/);
    const honeypot = await postForm(t, link.token, formFields(await solvedChallenge(t, link.token)).map((part) => (part.name === 'website' ? { name: 'website', value: 'http://spam.example' } : part)));
    refusedPage(honeypot, 400, /website must be left empty/);
    const noName = await postForm(t, link.token, formFields(await solvedChallenge(t, link.token), { requesterName: ' ' }));
    refusedPage(noName, 400, /requesterName is required/);
    assert.match(noName.body, /Water is leaking under the kitchen sink/, 'what was typed is kept');
    refusedPage(await postForm(t, link.token, [...formFields(await solvedChallenge(t, link.token)), ...Array.from({ length: 6 }, photo)]), 413, /At most 5 files/);
    refusedPage(await postForm(t, link.token, [...formFields(await solvedChallenge(t, link.token)), { name: 'photos', filename: 'doc.pdf', type: 'application/pdf', bytes: Buffer.from('%PDF-1.7\n') }]), 415, /Only photos/);
    refusedPage(await postForm(t, link.token, [...formFields(await solvedChallenge(t, link.token)), { name: 'photos', filename: 'fake.jpg', type: 'image/jpeg', bytes: Buffer.from('not a jpeg at all') }]), 415, /./);
    refusedPage(await postForm(t, link.token, formFields(await solvedChallenge(t, link.token), { description: 'x'.repeat(20_001) })), 413, /longer than/);
    const photoFirst = await postForm(t, link.token, [photo(), ...formFields(await solvedChallenge(t, link.token))]);
    refusedPage(photoFirst, 400, /before the photos/);
    const cut = await t.app.inject({ method: 'POST', url: `/intake/${link.token}`, payload: '--xyz\r\ncontent-disposition: form-data; name="description"\r\n\r\nabc', headers: { 'content-type': 'multipart/form-data; boundary=xyz' } });
    assert.equal(cut.statusCode, 400, cut.body);
    await nothingCreated('refusals');

    // A solution is spent once: sent again, it is refused and nothing more is written.
    const altcha = await solvedChallenge(t, link.token);
    statusPathOf(await postForm(t, link.token, formFields(altcha)));
    const replay = await postForm(t, link.token, formFields(altcha, { description: 'Again' }));
    refusedPage(replay, 422, /already sent with this proof-of-work/);
    assert.equal(await countRows(t, 'work_requests'), 1);
    // A solution made for another link does not open this one.
    const other = await createIntakeLink(tenant, { name: 'Other door' });
    refusedPage(await postForm(t, link.token, formFields(await solvedChallenge(t, other.token))), 422, /proof-of-work/);

    // JSON clients get problem+json with the stable code.
    const jsonRefusal = await t.app.inject({ method: 'POST', url: `/intake/${link.token}`, payload: { description: 'x', requesterName: 'y', altcha: 'bm9wZQ==' } });
    assert.equal(jsonRefusal.statusCode, 422);
    assert.match(String(jsonRefusal.headers['content-type']), /^application\/problem\+json/);
    assert.equal(jsonRefusal.json().code, 'proof_of_work_invalid');
    const unknownField = await t.app.inject({ method: 'POST', url: `/intake/${link.token}`, payload: { description: 'x', requesterName: 'y', priority: 'URGENT' } });
    assert.equal(unknownField.statusCode, 400);
    assert.equal(unknownField.json().errors[0].field, 'body.priority');
    const unknownToken = await t.app.inject({ method: 'POST', url: `/intake/wit_${'B'.repeat(43)}`, payload: { description: 'x', requesterName: 'y' } });
    assert.equal(unknownToken.statusCode, 404);
    assert.equal(unknownToken.json().code, 'not_found');
    assert.equal(await countRows(t, 'work_requests'), 1);
  }, { env: { WO_INTAKE_SUBMISSIONS_PER_ADDRESS: '1000' } });

  itOnEachDatabase(
    'spends the budgets per address and per link before reading the body, and answers 429 with Retry-After',
    async (t) => {
      const tenant = await t.newTenant();
      const link = await createIntakeLink(tenant);
      const second = await createIntakeLink(tenant, { name: 'Second' });
      const fromAddress = (token: string, address: string) => t.app.inject({ method: 'POST', url: `/intake/${token}`, remoteAddress: address, payload: { description: 'x', requesterName: 'y' } });
      for (let n = 0; n < 2; n++) assert.equal((await fromAddress(link.token, '198.51.100.7')).statusCode, 422);
      const spent = await fromAddress(second.token, '198.51.100.7');
      assert.equal(spent.statusCode, 429, 'the address’s budget covers every link');
      assert.ok(Number(spent.headers['retry-after']) > 0);
      assert.equal(spent.json().code, 'rate_limited');
      const page = await t.app.inject({ method: 'POST', url: `/intake/${link.token}`, remoteAddress: '198.51.100.7', ...(await import('../helpers/multipart.js')).multipartBody([{ name: 'description', value: 'x' }]) });
      assert.equal(page.statusCode, 429);
      assert.match(page.body, /Too many reports/);
      // Another address still gets through, until the link's own budget is spent.
      for (let n = 0; n < 2; n++) assert.equal((await fromAddress(link.token, `203.0.113.${n + 1}`)).statusCode, 422);
      assert.equal((await fromAddress(link.token, '203.0.113.9')).statusCode, 429, 'the link’s budget covers every address');
      assert.equal((await fromAddress(second.token, '203.0.113.9')).statusCode, 422, 'another link has its own');
      // Once refused, a flood from that address writes nothing more: the counter stays where the refusal left it.
      const counter = () => t.context.database.db.selectFrom('job_page_budgets').select('used').where('key', '=', 'intake:address:198.51.100.7').executeTakeFirstOrThrow();
      const usedAtRefusal = Number((await counter()).used);
      for (let n = 0; n < 5; n++) assert.equal((await fromAddress(link.token, '198.51.100.7')).statusCode, 429);
      assert.equal(Number((await counter()).used), usedAtRefusal);
      // Viewing the form spends nothing.
      assert.equal((await t.app.inject({ method: 'GET', url: `/intake/${link.token}`, remoteAddress: '198.51.100.7' })).statusCode, 200);
      assert.equal(await countRows(t, 'work_requests'), 0);
    },
    { env: { WO_INTAKE_SUBMISSIONS_PER_ADDRESS: '2', WO_INTAKE_SUBMISSIONS_PER_LINK: '4' } },
  );

  itOnEachDatabase('answers its QR code as SVG, for the form’s own URL', async (t) => {
    const tenant = await t.newTenant();
    const link = await createIntakeLink(tenant);
    const qr = await t.app.inject({ method: 'GET', url: `/intake/${link.token}/qr.svg` });
    assert.equal(qr.statusCode, 200);
    assert.equal(qr.headers['content-type'], 'image/svg+xml');
    assert.match(qr.body, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    const { default: QRCode } = await import('qrcode');
    assert.equal(qr.body, await QRCode.toString(link.url, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 }), 'it encodes the form’s URL');
  });
});
