import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { createWorkOrder, itOnEachDatabase } from '../helpers/test-app.js';
import { sampleFiles, sha256Of } from '../helpers/files.js';
import { CHUNK_BYTES } from '../../src/attachments/service.js';

// The JPEG magic numbers sampleFiles.jpeg puts before its random bytes.
const HEADER_BYTES = 20;
const MAX_BYTES = 25 * 1024 * 1024;

describe('attachment downloads', () => {
  itOnEachDatabase('gives back every byte as uploaded, at sizes around the chunk edges and up to 25 MiB, whole and by range', async (t) => {
    const tenant = await t.newTenant();
    const recordId = await createWorkOrder(tenant);
    // Every byte value, so that a decoding step (hex, text) that loses one shows here.
    const everyByte = Buffer.concat([sampleFiles.jpeg(0), Buffer.from(Array.from({ length: 256 * 4 }, (_, i) => i % 256))]);
    const sizes = [HEADER_BYTES + 1, CHUNK_BYTES - 1, CHUNK_BYTES, CHUNK_BYTES + 1, 3 * CHUNK_BYTES + 7, MAX_BYTES];
    for (const file of [everyByte, ...sizes.map((size) => sampleFiles.jpeg(size - HEADER_BYTES))]) {
      const created = await tenant.request({ method: 'POST', url: `/api/v1/records/${recordId}/attachments?filename=f.jpg`, headers: { 'content-type': 'image/jpeg' }, payload: file });
      assert.equal(created.statusCode, 201, created.body);
      const content = `/api/v1/records/${recordId}/attachments/${created.json().id}/content`;
      const whole = await tenant.request({ method: 'GET', url: content });
      assert.equal(whole.statusCode, 200);
      assert.equal(whole.rawPayload.length, file.length);
      assert.equal(sha256Of(whole.rawPayload), sha256Of(file), `the ${file.length} bytes come back the same`);
      // A range from inside the first chunk to inside the last.
      const [start, end] = [Math.floor(file.length / 3), file.length - 2];
      const part = await tenant.request({ method: 'GET', url: content, headers: { range: `bytes=${start}-${end}` } });
      assert.equal(part.statusCode, 206);
      assert.equal(sha256Of(part.rawPayload), sha256Of(file.subarray(start, end + 1)), `bytes ${start}-${end} of ${file.length}`);
    }
  });
});
