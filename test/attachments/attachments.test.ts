import assert from 'node:assert/strict';
import net from 'node:net';
import { Readable } from 'node:stream';
import { describe } from 'node:test';
import { createWorkOrder, itOnEachDatabase, waitFor, type TestApp, type Tenant } from '../helpers/test-app.js';
import { sampleFiles, sha256Of } from '../helpers/files.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

function upload(tenant: Tenant, recordId: string, bytes: Buffer | Readable, mediaType: string, filename = 'photo.jpg', headers: Record<string, string> = {}) {
  return tenant.request({
    method: 'POST',
    url: `/api/v1/records/${recordId}/attachments?filename=${encodeURIComponent(filename)}`,
    headers: { 'content-type': mediaType, ...headers },
    payload: bytes,
  });
}

/** Rows of every attachment, finished or not, and of every chunk: what a refused upload must leave none of. */
async function storedRows(t: TestApp): Promise<{ attachments: number; chunks: number }> {
  const { db } = t.context.database;
  const count = async (table: 'attachments' | 'attachment_chunks') => Number((await db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  return { attachments: await count('attachments'), chunks: await count('attachment_chunks') };
}

describe('attachments', () => {
  itOnEachDatabase('stores a 5 MB photo and gives back the same bytes: whole, by range, and 304 for its ETag', async (t) => {
    const tenant = await t.newTenant();
    const recordId = await createWorkOrder(tenant);
    const photo = sampleFiles.jpeg(5 * 1024 * 1024 + 123);
    const created = await upload(tenant, recordId, photo, 'image/jpeg', 'Küche "vorher".jpg');
    assert.equal(created.statusCode, 201, created.body);
    const attachment = created.json();
    assert.match(attachment.id, /^file_/);
    assert.deepEqual({ ...attachment, id: undefined, createdAt: undefined }, {
      id: undefined,
      recordId,
      filename: 'Küche "vorher".jpg',
      mediaType: 'image/jpeg',
      size: photo.length,
      sha256: sha256Of(photo),
      createdAt: undefined,
    });
    assert.equal(created.headers.location, `/api/v1/records/${recordId}/attachments/${attachment.id}`);
    const base = `/api/v1/records/${recordId}/attachments/${attachment.id}`;
    assert.deepEqual((await tenant.request({ method: 'GET', url: base })).json(), attachment);
    const list = (await tenant.request({ method: 'GET', url: `/api/v1/records/${recordId}/attachments` })).json();
    assert.deepEqual(list, { attachments: [attachment], total: 1, limit: 50, offset: 0 });

    const whole = await tenant.request({ method: 'GET', url: `${base}/content` });
    assert.equal(whole.statusCode, 200);
    assert.ok(whole.rawPayload.equals(photo), 'the bytes round-trip');
    const etag = `"${sha256Of(photo)}"`;
    assert.equal(whole.headers.etag, etag);
    assert.equal(whole.headers['content-type'], 'image/jpeg');
    assert.equal(whole.headers['content-length'], String(photo.length));
    assert.equal(whole.headers['x-content-type-options'], 'nosniff');
    assert.equal(whole.headers['accept-ranges'], 'bytes');
    assert.equal(whole.headers['content-disposition'], `attachment; filename="K_che _vorher_.jpg"; filename*=UTF-8''K%C3%BCche%20%22vorher%22.jpg`);

    // A range across the boundary of two stored chunks, and a suffix.
    const across = await tenant.request({ method: 'GET', url: `${base}/content`, headers: { range: 'bytes=524000-1049000' } });
    assert.equal(across.statusCode, 206);
    assert.equal(across.headers['content-range'], `bytes 524000-1049000/${photo.length}`);
    assert.ok(across.rawPayload.equals(photo.subarray(524000, 1049001)));
    const tail = await tenant.request({ method: 'GET', url: `${base}/content`, headers: { range: 'bytes=-100' } });
    assert.equal(tail.statusCode, 206);
    assert.ok(tail.rawPayload.equals(photo.subarray(photo.length - 100)));
    const stale = await tenant.request({ method: 'GET', url: `${base}/content`, headers: { range: 'bytes=0-9', 'if-range': '"another"' } });
    assert.equal(stale.statusCode, 200, 'a Range under a stale If-Range gets the whole file');

    const beyond = await tenant.request({ method: 'GET', url: `${base}/content`, headers: { range: `bytes=${photo.length}-` } });
    assert.equal(beyond.statusCode, 416);
    assert.match(String(beyond.headers['content-type']), /^application\/problem\+json/);
    assert.equal(beyond.json().code, 'range_not_satisfiable');
    assert.equal(beyond.headers['content-range'], `bytes */${photo.length}`);

    const head = await tenant.request({ method: 'HEAD', url: `${base}/content` });
    assert.equal(head.statusCode, 200);
    assert.equal(head.headers['content-length'], String(photo.length));
    assert.equal(head.rawPayload.length, 0);

    const notModified = await tenant.request({ method: 'GET', url: `${base}/content`, headers: { 'if-none-match': `"x", ${etag}` } });
    assert.equal(notModified.statusCode, 304);
    assert.equal(notModified.rawPayload.length, 0);
    assert.equal(notModified.headers.etag, etag);
    // A cache refreshes its stored headers from a 304: none may describe another representation.
    assert.equal(notModified.headers['content-type'], undefined);
    assert.equal(notModified.headers['content-length'], undefined);
    const headNotModified = await tenant.request({ method: 'HEAD', url: `${base}/content`, headers: { 'if-none-match': etag } });
    assert.equal(headNotModified.statusCode, 304);
    assert.equal(headNotModified.headers['content-type'], undefined);
  });

  itOnEachDatabase('accepts each allowed type recognized from its bytes, and serves text as UTF-8', async (t) => {
    const tenant = await t.newTenant();
    const recordId = await createWorkOrder(tenant);
    for (const [mediaType, bytes] of [
      ['image/png', sampleFiles.png()],
      ['image/webp', sampleFiles.webp()],
      ['image/heic', sampleFiles.heic()],
      ['image/heif', sampleFiles.heic()],
      ['application/pdf', sampleFiles.pdf()],
      ['text/plain; charset=utf-8', sampleFiles.text()],
    ] as const) {
      const response = await upload(tenant, recordId, bytes, mediaType, 'file');
      assert.equal(response.statusCode, 201, `${mediaType}: ${response.body}`);
      assert.equal(response.json().mediaType, mediaType.split(';')[0]);
    }
    const text = (await tenant.request({ method: 'GET', url: `/api/v1/records/${recordId}/attachments?limit=1&offset=5` })).json().attachments[0];
    const served = await tenant.request({ method: 'GET', url: `/api/v1/records/${recordId}/attachments/${text.id}/content` });
    assert.equal(served.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(served.body, sampleFiles.text().toString('utf8'));
  });

  itOnEachDatabase('refuses types not allowed, bytes that are not the declared type, and text that is not UTF-8, storing nothing', async (t) => {
    const tenant = await t.newTenant();
    const recordId = await createWorkOrder(tenant);
    const refusals: [string, Buffer | string, string | undefined][] = [
      ['a type not allowed', sampleFiles.jpeg(), 'image/gif'],
      ['JSON', '{"a":1}', 'application/json'],
      ['no Content-Type', sampleFiles.jpeg(), undefined],
      ['JPEG bytes declared as PNG', sampleFiles.jpeg(), 'image/png'],
      ['PDF bytes declared as text', sampleFiles.pdf(), 'text/plain'],
      ['random bytes declared as JPEG', sampleFiles.text(), 'image/jpeg'],
      ['Latin-1 text', Buffer.from('caf\xe9', 'latin1'), 'text/plain'],
      ['text with a NUL byte', Buffer.from('a\u0000b'), 'text/plain'],
      ['text in another charset', 'abc', 'text/plain; charset=iso-8859-1'],
      ['a compressed body', sampleFiles.jpeg(), 'image/jpeg'],
    ];
    for (const [what, bytes, mediaType] of refusals) {
      const response = await tenant.request({
        method: 'POST',
        url: `/api/v1/records/${recordId}/attachments?filename=f`,
        headers: { ...(mediaType ? { 'content-type': mediaType } : {}), ...(what === 'a compressed body' ? { 'content-encoding': 'gzip' } : {}) },
        payload: bytes,
      });
      assert.equal(response.statusCode, 415, `${what}: ${response.body}`);
      assert.equal(response.json().code, 'unsupported_media_type', what);
    }
    // A PNG whose declared type is JPEG is refused once its first bytes arrived, though the body is far larger.
    const large = await upload(tenant, recordId, sampleFiles.png(3 * 1024 * 1024), 'image/jpeg');
    assert.equal(large.statusCode, 415);
    assert.match(large.json().detail, /image\/png, not the declared image\/jpeg/);
    assert.deepEqual(await storedRows(t), { attachments: 0, chunks: 0 });
  });

  itOnEachDatabase(
    'refuses a file over WO_ATTACHMENT_MAX_BYTES by its Content-Length and while streaming one sent without, an empty body, and unsafe names, storing nothing',
    async (t) => {
      const tenant = await t.newTenant();
      const recordId = await createWorkOrder(tenant);
      const max = 1024 * 1024;
      const byHeader = await upload(tenant, recordId, sampleFiles.jpeg(max), 'image/jpeg');
      assert.equal(byHeader.statusCode, 413, byHeader.body);
      assert.equal(byHeader.json().code, 'payload_too_large');

      // Sent in pieces without a Content-Length: counted as it arrives, after some chunks were stored.
      const bytes = sampleFiles.jpeg(max);
      const pieces = Array.from({ length: Math.ceil(bytes.length / 65536) }, (_, i) => bytes.subarray(i * 65536, (i + 1) * 65536));
      const streamed = await upload(tenant, recordId, Readable.from(pieces), 'image/jpeg');
      assert.equal(streamed.statusCode, 413, streamed.body);
      assert.match(streamed.json().detail, /larger than the 1048576 bytes/);
      assert.equal(streamed.headers.connection, 'close');

      const exactly = await upload(tenant, recordId, sampleFiles.jpeg(max - 20), 'image/jpeg');
      assert.equal(exactly.statusCode, 201, 'a file of exactly the limit is accepted');
      const empty = await upload(tenant, recordId, Buffer.alloc(0), 'image/jpeg');
      assert.equal(empty.statusCode, 400);
      assert.deepEqual(empty.json().errors, [{ field: 'body', message: 'must not be empty' }]);
      for (const filename of ['../etc/passwd', 'a\\b.jpg', 'line\nbreak.jpg', '..', ' ', 'a\u0085.jpg', 'invoice\u202Egpj.exe', 'zero\u200Bwidth.jpg', 'bom\uFEFF.jpg']) {
        const unsafe = await upload(tenant, recordId, sampleFiles.jpeg(), 'image/jpeg', filename);
        assert.equal(unsafe.statusCode, 400, `${JSON.stringify(filename)}: ${unsafe.body}`);
      }
      assert.equal((await tenant.request({ method: 'POST', url: `/api/v1/records/${recordId}/attachments`, headers: { 'content-type': 'image/jpeg' }, payload: sampleFiles.jpeg() })).statusCode, 400, 'filename is required');
      assert.deepEqual(await storedRows(t), { attachments: 1, chunks: 2 });
    },
    { env: { WO_ATTACHMENT_MAX_BYTES: String(1024 * 1024) } },
  );

  itOnEachDatabase('stores nothing of an upload whose client disconnects mid-body', async (t) => {
    const tenant = await t.newTenant();
    const recordId = await createWorkOrder(tenant);
    const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = new URL(address);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /api/v1/records/${recordId}/attachments?filename=cut.jpg HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${tenant.key}\r\n` +
        `Content-Type: image/jpeg\r\nContent-Length: ${4 * 1024 * 1024}\r\n\r\n`,
    );
    socket.write(sampleFiles.jpeg(1536 * 1024));
    // Some chunks are in the database before the client goes away...
    await waitFor(async () => (await storedRows(t)).chunks >= 2, 10_000, 'the first chunks of the upload to be stored');
    assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/records/${recordId}/attachments` })).json().total, 0, 'an upload in progress is not listed');
    socket.destroy();
    // ...and none of them once it has.
    await waitFor(async () => {
      const rows = await storedRows(t);
      return rows.attachments === 0 && rows.chunks === 0;
    }, 10_000, 'the cut-off upload to be deleted');
  });

  itOnEachDatabase('hides another organization’s attachments and work orders (404) and requires the records scopes', async (t) => {
    const owner = await t.newTenant();
    const stranger = await t.newTenant();
    const recordId = await createWorkOrder(owner);
    const theirRecord = await createWorkOrder(stranger);
    const id = (await upload(owner, recordId, sampleFiles.jpeg(), 'image/jpeg')).json().id as string;
    for (const url of [
      `/api/v1/records/${recordId}/attachments`,
      `/api/v1/records/${recordId}/attachments/${id}`,
      `/api/v1/records/${recordId}/attachments/${id}/content`,
      `/api/v1/records/${theirRecord}/attachments/${id}`,
      `/api/v1/records/${theirRecord}/attachments/${id}/content`,
    ]) {
      const response = await stranger.request({ method: 'GET', url });
      assert.equal(response.statusCode, 404, url);
      assert.equal(response.json().code, 'not_found');
    }
    assert.equal((await upload(stranger, recordId, sampleFiles.jpeg(), 'image/jpeg')).statusCode, 404);
    assert.equal((await stranger.request({ method: 'DELETE', url: `/api/v1/records/${theirRecord}/attachments/${id}` })).statusCode, 404);

    const reader = await t.newTenant(['records:read']);
    const writer = await t.newTenant(['records:write']);
    const readersRecord = await createWorkOrder(await t.newTenant());
    assert.equal((await upload(reader, readersRecord, sampleFiles.jpeg(), 'image/jpeg')).statusCode, 403);
    assert.equal((await writer.request({ method: 'GET', url: `/api/v1/records/${readersRecord}/attachments` })).statusCode, 403);
    assert.equal((await owner.request({ method: 'GET', url: `/api/v1/records/${recordId}/attachments/${id}/content` })).statusCode, 200);
  });

  itOnEachDatabase('stores one file for an upload retried with the same Idempotency-Key, and refuses the key for other bytes', async (t) => {
    const tenant = await t.newTenant();
    const recordId = await createWorkOrder(tenant);
    const photo = sampleFiles.jpeg(700 * 1024);
    const headers = { 'idempotency-key': 'upload-1' };
    const first = await upload(tenant, recordId, photo, 'image/jpeg', 'photo.jpg', headers);
    const retry = await upload(tenant, recordId, photo, 'image/jpeg', 'photo.jpg', headers);
    assert.equal(first.statusCode, 201);
    assert.equal(retry.statusCode, 201);
    assert.equal(retry.headers['x-idempotent-replay'], 'true');
    assert.equal(retry.body, first.body);
    assert.equal(retry.headers.location, first.headers.location);
    const other = await upload(tenant, recordId, sampleFiles.jpeg(700 * 1024), 'image/jpeg', 'photo.jpg', headers);
    assert.equal(other.statusCode, 422);
    assert.equal(other.json().code, 'idempotency_key_mismatch');
    assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/records/${recordId}/attachments` })).json().total, 1);
    // The retries' bytes were received, then dropped: only the first file's two chunks remain.
    await waitFor(async () => JSON.stringify(await storedRows(t)) === JSON.stringify({ attachments: 1, chunks: 2 }) || undefined, 10_000, 'only one file stored');
  });

  itOnEachDatabase('deletes a file with its bytes, records both changes in the history and as events, and refuses to delete evidence', async (t) => {
    const tenant = await t.newTenant();
    const recordId = await createWorkOrder(tenant);
    const kept = (await upload(tenant, recordId, sampleFiles.jpeg(), 'image/jpeg', 'kept.jpg')).json();
    const dropped = (await upload(tenant, recordId, sampleFiles.pdf(), 'application/pdf', 'wrong.pdf')).json();
    const deleted = await tenant.request({ method: 'DELETE', url: `/api/v1/records/${recordId}/attachments/${dropped.id}` });
    assert.equal(deleted.statusCode, 204);
    assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/records/${recordId}/attachments/${dropped.id}/content` })).statusCode, 404);
    assert.equal((await tenant.request({ method: 'DELETE', url: `/api/v1/records/${recordId}/attachments/${dropped.id}` })).statusCode, 404);

    await tenant.request({ method: 'POST', url: `/api/v1/records/${recordId}/assign`, payload: { assignee: 'Bob' } });
    await tenant.request({ method: 'POST', url: `/api/v1/records/${recordId}/start`, payload: {} });
    const completed = await tenant.request({ method: 'POST', url: `/api/v1/records/${recordId}/complete`, payload: { resolutionNotes: 'Done', evidence: [{ attachmentId: kept.id }] } });
    assert.equal(completed.statusCode, 200, completed.body);
    const refused = await tenant.request({ method: 'DELETE', url: `/api/v1/records/${recordId}/attachments/${kept.id}` });
    assert.equal(refused.statusCode, 409);
    assert.equal(refused.json().code, 'resource_in_use');
    assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/records/${recordId}/attachments/${kept.id}/content` })).statusCode, 200);

    const history = (await tenant.request({ method: 'GET', url: `/api/v1/records/${recordId}/events` })).json().events as { action: string; data: Record<string, unknown>; actor: { id: string } }[];
    assert.deepEqual(history.map((entry) => entry.action), ['created', 'attachment_added', 'attachment_added', 'attachment_deleted', 'assign', 'start', 'complete']);
    assert.deepEqual(history[3]!.data, { attachmentId: dropped.id, filename: 'wrong.pdf', mediaType: 'application/pdf', size: dropped.size, sha256: dropped.sha256 });
    assert.equal(history[3]!.actor.id, tenant.keyId);

    const events = await t.context.database.db.selectFrom('outbox_events').select(['type', 'payload']).where('org_id', '=', tenant.orgId).where('type', 'like', 'record.attachment%').orderBy('seq').execute();
    assert.deepEqual(
      events.map((event) => [event.type, JSON.parse(event.payload)]),
      [
        ['record.attachment_added', { recordId, attachment: kept }],
        ['record.attachment_added', { recordId, attachment: dropped }],
        ['record.attachment_deleted', { recordId, attachment: dropped }],
      ],
    );
  });

  itOnEachDatabase('delivers comment and attachment events to webhook subscribers', async (t) => {
    const tenant = await t.newTenant();
    const recordId = await createWorkOrder(tenant);
    const receiver = await startReceiver();
    try {
      const events = ['record.comment_added', 'record.attachment_added', 'record.attachment_deleted'];
      const subscribed = await tenant.request({ method: 'POST', url: '/api/v1/webhooks', payload: { name: 'activity', url: receiver.url, events } });
      assert.equal(subscribed.statusCode, 201, subscribed.body);
      for (const job of t.context.backgroundJobs) job.start();
      const comment = (await tenant.request({ method: 'POST', url: `/api/v1/records/${recordId}/comments`, payload: { body: 'On my way' } })).json();
      const attachment = (await upload(tenant, recordId, sampleFiles.png(), 'image/png', 'leak.png')).json();
      await tenant.request({ method: 'DELETE', url: `/api/v1/records/${recordId}/attachments/${attachment.id}` });
      await waitFor(() => receiver.received.length >= 3 || undefined, 15_000, 'three deliveries');
      const byEvent = Object.fromEntries(receiver.received.map((delivery) => [delivery.json.event, delivery.json.payload]));
      assert.deepEqual(byEvent['record.comment_added'], { recordId, comment, sequence: byEvent['record.comment_added']!.sequence });
      assert.deepEqual(byEvent['record.attachment_added'], { recordId, attachment, sequence: byEvent['record.attachment_added']!.sequence });
      assert.deepEqual(byEvent['record.attachment_deleted'], { recordId, attachment, sequence: byEvent['record.attachment_deleted']!.sequence });
    } finally {
      await receiver.close();
    }
  });

  itOnEachDatabase('sweeps away uploads a dead process left unfinished, once they are an hour old, and nothing else', async (t) => {
    const tenant = await t.newTenant();
    const recordId = await createWorkOrder(tenant);
    const stored = (await upload(tenant, recordId, sampleFiles.jpeg(), 'image/jpeg')).json();
    const { db } = t.context.database;
    const left = (id: string, startedMinutesAgo: number) => ({
      id,
      org_id: tenant.orgId,
      record_id: recordId,
      filename: 'cut.jpg',
      media_type: 'image/jpeg',
      state: 'uploading' as const,
      size: 0,
      sha256: null,
      chunk_bytes: 524288,
      evidence_at: null,
      created_at: new Date(Date.now() - startedMinutesAgo * 60_000).toISOString(),
    });
    await db.insertInto('attachments').values([left('file_abandoned', 61), left('file_in_progress', 5)]).execute();
    await db.insertInto('attachment_chunks').values([{ attachment_id: 'file_abandoned', n: 0, bytes: sampleFiles.jpeg() }, { attachment_id: 'file_in_progress', n: 0, bytes: sampleFiles.jpeg() }]).execute();
    assert.equal(await t.context.attachments.sweepAbandonedUploads(), 1);
    const remaining = await db.selectFrom('attachments').select('id').orderBy('id').execute();
    assert.deepEqual(remaining.map((row) => row.id).sort(), [stored.id, 'file_in_progress'].sort());
    assert.deepEqual(await storedRows(t), { attachments: 2, chunks: 2 });
  });
});
