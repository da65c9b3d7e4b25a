// A request's files become its work order's on approval: the same rows and chunks, stored once.
import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { itOnEachDatabase, seedCategory } from '../helpers/test-app.js';
import { pngImage } from '../helpers/png.js';

describe('work request attachments', () => {
  itOnEachDatabase('hands the request’s photo to the work order without a copy', async (t) => {
    const tenant = await t.newTenant();
    const categoryId = await seedCategory(tenant);
    const filed = (await tenant.request({ method: 'POST', url: '/api/v1/requests', payload: { description: 'Cracked tile', requesterName: 'Ann' } })).json();
    const photo = pngImage(64, 48, (x, y) => [x * 4, y * 5, 120]);
    const upload = await tenant.request({ method: 'POST', url: `/api/v1/requests/${filed.id}/attachments?filename=tile.png`, headers: { 'content-type': 'image/png' }, payload: photo });
    assert.equal(upload.statusCode, 201, upload.body);
    const added = upload.json();
    assert.equal(upload.headers.location, `/api/v1/requests/${filed.id}/attachments`);
    assert.equal(added.requestId, filed.id);
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

  itOnEachDatabase('takes files like a work order does: checked bytes, at most five, only while submitted, idempotent, in its organization', async (t) => {
    const tenant = await t.newTenant();
    const other = await t.newTenant();
    const categoryId = await seedCategory(tenant);
    const filed = (await tenant.request({ method: 'POST', url: '/api/v1/requests', payload: { description: 'Broken window', requesterName: 'Ben' } })).json();
    const photo = pngImage(8, 8, (x, y) => [x * 30, y * 30, 60]);
    const send = (id: string, body: Buffer, contentType = 'image/png', headers: Record<string, string> = {}, who = tenant) =>
      who.request({ method: 'POST', url: `/api/v1/requests/${id}/attachments?filename=p.png`, headers: { 'content-type': contentType, ...headers }, payload: body });

    const notImage = await send(filed.id, Buffer.from('%PDF-1.7 not a png at all'));
    assert.equal(notImage.statusCode, 415);
    assert.match(String(notImage.headers["content-type"]), /^application\/problem\+json/);
    assert.equal((await send(filed.id, photo, 'image/png', {}, other)).statusCode, 404, 'another organization’s request is not found');

    const first = await send(filed.id, photo, 'image/png', { 'idempotency-key': 'req-photo-1' });
    const replay = await send(filed.id, photo, 'image/png', { 'idempotency-key': 'req-photo-1' });
    assert.equal(first.statusCode, 201);
    assert.equal(replay.headers['x-idempotent-replay'], 'true');
    assert.equal(replay.json().id, first.json().id);
    for (let n = 2; n <= 5; n++) assert.equal((await send(filed.id, pngImage(8, 8, () => [n, n, n]))).statusCode, 201);
    const sixth = await send(filed.id, photo);
    assert.equal(sixth.statusCode, 413);
    assert.equal(sixth.json().code, 'payload_too_large');
    assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/requests/${filed.id}/attachments` })).json().total, 5);

    const version = (await tenant.request({ method: 'GET', url: `/api/v1/requests/${filed.id}` })).json().version;
    assert.equal(version, 6, 'each file is a new version of the request');
    await tenant.request({ method: 'POST', url: `/api/v1/requests/${filed.id}/approve`, payload: { categoryId } });
    const late = await send(filed.id, photo);
    assert.equal(late.statusCode, 409);
    assert.equal(late.json().code, 'request_decided');
  });
});
