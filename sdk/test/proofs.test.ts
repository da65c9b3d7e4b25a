import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe } from 'node:test';
import { verifyProof, type CompletionStatement, type ProofFailureReason } from '@work-order-api/client';
import type { CompletionStatement as ServiceStatement } from '../../src/proofs/statement.js';
import type { VerifyReason } from '../../src/proofs/verify.js';
import { itAgainstLiveService, workOrderBody } from './live-service.js';

// The SDK declares the verifier's types for its users; they must stay those of the verifier it bundles.
const statementsAgree: [CompletionStatement, ServiceStatement] = [{} as ServiceStatement, {} as CompletionStatement];
const reasonsAgree: [ProofFailureReason, VerifyReason] = ['' as VerifyReason, '' as ProofFailureReason];
void statementsAgree;
void reasonsAgree;

describe('verifyProof on a real sealed proof', () => {
  itAgainstLiveService('verifies the bundle and that each file is evidence the proof names', async ({ client }) => {
    const category = await client.createCategory({ body: { name: 'Plumbing' } });
    const record = await client.createRecord({ body: { ...workOrderBody(category.id), assignee: 'Bob Plumber' } });
    await client.startRecord({ path: { id: record.id } });
    const report = new TextEncoder().encode('Replaced the washer; no leak after 10 minutes.\n');
    const attachment = await client.uploadRecordAttachment({ path: { id: record.id }, query: { filename: 'report.txt' }, body: report, contentType: 'text/plain' });
    const photo = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3, 4]);
    const photoDigest = createHash('sha256').update(photo).digest('hex');
    await client.completeRecord({
      path: { id: record.id },
      body: { resolutionNotes: 'Replaced the washer', evidence: [{ attachmentId: attachment.id }, { name: 'after.jpg', sha256: photoDigest, mediaType: 'image/jpeg' }] },
    });

    const bundle = await client.waitForProof({ recordId: record.id, timeoutMs: 20_000 });
    const jwks = await client.getJwks();
    const result = await verifyProof(bundle, jwks, { files: [{ name: 'report.txt', bytes: report }, photo] });
    assert.equal(result.valid, true, JSON.stringify(result));
    if (!result.valid) return;
    assert.equal(result.recordId, record.id);
    assert.equal(result.statement.resolutionNotes, 'Replaced the washer');
    assert.equal(result.files[0]!.evidence?.attachmentId, attachment.id);
    assert.equal(result.files[1]!.evidence?.name, 'after.jpg');

    const stranger = await verifyProof(bundle, jwks, { files: [{ name: 'other.txt', bytes: new TextEncoder().encode('something else') }] });
    assert.equal(stranger.valid, false);
    if (!stranger.valid) {
      assert.equal(stranger.reason, 'not_evidence');
      assert.match(stranger.detail, /other\.txt/);
    }
    // Same bytes but a different size than the attached file's: not that file.
    const truncated = await verifyProof(bundle, jwks, { files: [report.slice(0, 10)] });
    assert.equal(truncated.valid, false);

    const moved = await verifyProof({ ...bundle, leafIndex: bundle.leafIndex + 1, treeSize: bundle.treeSize }, jwks);
    assert.deepEqual(moved.valid ? 'valid' : moved.reason, 'leaf_not_in_tree');
    const otherKeys = await verifyProof(bundle, { keys: jwks.keys.filter((key) => key['x-wo-role'] !== 'statement') });
    assert.deepEqual(otherKeys.valid ? 'valid' : otherKeys.reason, 'unknown_key');
    const notABundle = await verifyProof({ hello: 'world' }, jwks);
    assert.deepEqual(notABundle.valid ? 'valid' : notABundle.reason, 'bundle_malformed');
  });

  itAgainstLiveService('tells a pending proof (202) from a sealed one (200)', async ({ client }) => {
    const category = await client.createCategory({ body: { name: 'Plumbing' } });
    const record = await client.createRecord({ body: { ...workOrderBody(category.id), assignee: 'Bob Plumber' } });
    await client.startRecord({ path: { id: record.id } });
    await client.completeRecord({ path: { id: record.id }, body: { resolutionNotes: 'Done' } });
    const first = await client.getRecordProof.withResponse({ path: { id: record.id } });
    assert.ok(first.status === 200 || first.status === 202);
    const sealed = await client.waitForProof({ recordId: record.id });
    assert.equal((await client.getProof({ path: { proofId: sealed.proofId } })).proofId, sealed.proofId);
  });
});
