// A request's files become its work order's on approval: the same rows and chunks, stored once.
import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { itOnEachDatabase, seedCategory } from '../helpers/test-app.js';
import { pngImage } from '../helpers/png.js';
import { intakePrincipal } from '../../src/requests/service.js';

describe('work request attachments', () => {
  itOnEachDatabase('hands the request’s photo to the work order without a copy', async (t) => {
    const tenant = await t.newTenant();
    const categoryId = await seedCategory(tenant);
    const filed = (await tenant.request({ method: 'POST', url: '/api/v1/requests', payload: { description: 'Cracked tile', requesterName: 'Ann' } })).json();
    const photo = pngImage(64, 48, (x, y) => [x * 4, y * 5, 120]);
    // Files reach a request through its intake form (the service the form calls).
    const added = await t.context.requests.addAttachment(intakePrincipal({ id: 'itk_test', org_id: tenant.orgId }), filed.id, {
      filename: 'tile.png',
      contentType: 'image/png',
      contentLength: photo.length,
      body: (async function* () {
        yield photo;
      })(),
    });
    const listed = (await tenant.request({ method: 'GET', url: `/api/v1/requests/${filed.id}/attachments` })).json();
    assert.deepEqual(listed.attachments.map((a: { id: string }) => a.id), [added.id]);
    assert.equal(listed.attachments[0].recordId, null);
    const chunksBefore = await t.context.database.db.selectFrom('attachment_chunks').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();

    const approved = (await tenant.request({ method: 'POST', url: `/api/v1/requests/${filed.id}/approve`, payload: { categoryId } })).json();
    const onRecord = (await tenant.request({ method: 'GET', url: `/api/v1/records/${approved.recordId}/attachments` })).json();
    assert.deepEqual(onRecord.attachments.map((a: { id: string; sha256: string }) => [a.id, a.sha256]), [[added.id, added.sha256]]);
    const content = await tenant.request({ method: 'GET', url: `/api/v1/records/${approved.recordId}/attachments/${added.id}/content` });
    assert.equal(content.statusCode, 200);
    assert.deepEqual(content.rawPayload, photo);
    const chunksAfter = await t.context.database.db.selectFrom('attachment_chunks').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    assert.equal(Number(chunksAfter.n), Number(chunksBefore.n), 'no chunk copied');
    assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/requests/${filed.id}/attachments` })).json().attachments[0].recordId, approved.recordId);
  });
});
