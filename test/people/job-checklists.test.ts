import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { itOnEachDatabase, recordBody, seedCategory, type TestApp, type Tenant } from '../helpers/test-app.js';
import { sampleFiles } from '../helpers/files.js';
import { create, jobPageClient, seeOther } from './job-page-helpers.js';

const ITEMS = [
  { key: 'valve', label: 'Safety valve', type: 'pass_fail', required: true },
  { key: 'pressure', label: 'Pressure', type: 'number', min: 1, max: 2, unit: 'bar', required: true },
  { key: 'fuel', label: 'Fuel', type: 'select', options: ['gas', 'oil'], required: true },
  { key: 'notes', label: 'Notes', type: 'text' },
  { key: 'flue', label: 'Flue clear', type: 'checkbox', required: true },
  { key: 'burner', label: 'Photo of the burner', type: 'photo', required: true },
  { key: 'sign_off', label: 'Tenant signs off', type: 'signature', required: true },
];

/** A vendor's link to an IN_PROGRESS boiler service with a 7-item checklist, and one photo uploaded through it. */
async function checklistJob(t: TestApp, tenant: Tenant) {
  const categoryId = await seedCategory(tenant);
  const acme = await create(tenant, '/api/v1/vendors', { name: 'Acme Heating' });
  const checklist = await create(tenant, '/api/v1/checklists', { name: 'Boiler service', items: [{ ...ITEMS[0], onFail: { categoryId } }, ...ITEMS.slice(1)] });
  const job = await create(tenant, '/api/v1/records', recordBody(categoryId, { description: 'Annual boiler service', assignees: [{ type: 'vendor', id: acme.id }], checklistIds: [checklist.id] }));
  const link = await create(tenant, `/api/v1/records/${job.id}/access-links`, { vendorId: acme.id, expiresIn: 'P7D' });
  const path = new URL(link.url).pathname;
  const { page, form } = jobPageClient(t, path);
  const answer = (key: string, fields: Record<string, string | string[]>) => form(`/checklists/${checklist.id}/items/${key}`, fields);
  assert.equal((await form('/start', {})).statusCode, 303);
  const photo = await page('/photos?filename=burner.jpg', { method: 'POST', payload: sampleFiles.jpeg(), headers: { 'content-type': 'image/jpeg' } });
  assert.equal(photo.statusCode, 201, photo.body);
  return { job, link, checklist, path, page, form, answer, photoId: photo.json().id as string };
}

describe('checklists on the job page', () => {
  itOnEachDatabase('lets a contractor answer every item type with plain forms, as link:lnk_…, and complete only once every required item is answered', async (t) => {
    const tenant = await t.newTenant();
    const { job, link, checklist, path, page, form, answer, photoId } = await checklistJob(t, tenant);
    const shown = await page();
    assert.match(shown.body, /Boiler service/);
    assert.match(shown.body, /6 required items still to answer/);
    for (const item of ITEMS) assert.match(shown.body, new RegExp(`action="${path}/checklists/${checklist.id}/items/${item.key}"`), item.key);
    assert.doesNotMatch(shown.body, /<script(?! src="\/job\/assets\/job\.js")/, 'no inline script');

    const early = await form('/complete', { resolutionNotes: 'Serviced.' });
    assert.equal(early.statusCode, 409);
    assert.match(early.body, /class="message error"/);

    seeOther(await answer('valve', { result: 'fail' }), path);
    seeOther(await answer('pressure', { number: '1.4' }), path);
    seeOther(await answer('fuel', { choice: 'gas' }), path);
    seeOther(await answer('notes', { text: 'Replaced the valve seal.' }), path);
    seeOther(await answer('flue', { checked: 'true' }), path);
    seeOther(await answer('burner', { photo: photoId }), path);
    seeOther(await answer('sign_off', { signer: 'Mia Tenant', signature: photoId }), path);

    const { checklists } = (await tenant.request({ method: 'GET', url: `/api/v1/records/${job.id}/checklists` })).json();
    const answers = Object.fromEntries(checklists[0].answers.map((a: Record<string, unknown>) => [a.key, a]));
    assert.deepEqual(checklists[0].missing, []);
    assert.deepEqual(
      Object.fromEntries(Object.entries(answers).map(([key, a]: [string, any]) => [key, a.value])),
      { valve: 'fail', pressure: 1.4, fuel: 'gas', notes: 'Replaced the valve seal.', flue: true, burner: { attachmentIds: [photoId] }, sign_off: { name: 'Mia Tenant', attachmentId: photoId } },
    );
    for (const a of Object.values(answers) as any[]) assert.equal(a.answeredBy, `link:${link.id}`);
    assert.equal(answers.valve.failed, true);
    assert.match(answers.valve.followUpRecordId, /^rec_/, 'the failed valve raised its follow-up');
    const again = await page();
    assert.match(again.body, /Failed: Fail/);
    assert.match(again.body, /Every required item is answered/);

    seeOther(await form('/complete', { resolutionNotes: 'Serviced; valve seal replaced.', evidence: [photoId] }), path);
    assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/records/${job.id}` })).json().status, 'COMPLETED');
    assert.doesNotMatch((await page()).body, /\/checklists\/[^"]+\/items\//, 'a finished job shows its answers read-only');
  });

  itOnEachDatabase('refuses an answer of the wrong type or naming another file with the page and a message, and stores nothing', async (t) => {
    const tenant = await t.newTenant();
    const { job, answer, page } = await checklistJob(t, tenant);
    const other = await create(tenant, '/api/v1/records', recordBody(await seedCategory(tenant), {}));
    const foreign = await tenant.request({ method: 'POST', url: `/api/v1/records/${other.id}/attachments?filename=other.jpg`, payload: sampleFiles.jpeg(), headers: { 'content-type': 'image/jpeg' } });
    assert.equal(foreign.statusCode, 201, foreign.body);
    for (const [key, fields, status] of [
      ['pressure', { number: 'high' }, 400],
      ['pressure', { number: '' }, 400],
      ['fuel', { choice: 'coal' }, 400],
      ['valve', {}, 400],
      ['burner', {}, 400],
      ['burner', { photo: foreign.json().id }, 400],
      ['sign_off', { signer: 'Mia' }, 400],
    ] as const) {
      const refused = await answer(key, fields);
      assert.equal(refused.statusCode, status, `${key} ${JSON.stringify(fields)}: ${refused.body.slice(0, 200)}`);
      assert.match(refused.headers['content-type'] as string, /^text\/html/);
      assert.match(refused.body, /class="message error"/);
    }
    assert.equal((await answer('nope', { text: 'x' })).statusCode, 404);
    const { checklists } = (await tenant.request({ method: 'GET', url: `/api/v1/records/${job.id}/checklists` })).json();
    assert.deepEqual(checklists[0].answers, []);
    assert.equal((await page()).statusCode, 200);
  });
});
