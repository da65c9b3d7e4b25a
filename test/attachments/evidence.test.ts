import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe } from 'node:test';
import { createWorkOrder, itOnEachDatabase, type TestApp, type Tenant } from '../helpers/test-app.js';
import { sampleFiles, sha256Of } from '../helpers/files.js';
import { evidenceMatching, sha256Hex, verifyBundle, type Jwks, type ProofBundle } from '../../src/proofs/verify.js';

const repoRoot = path.resolve(import.meta.dirname, '..', '..');

async function startedRecord(tenant: Tenant): Promise<string> {
  const id = await createWorkOrder(tenant, { assignee: 'Bob Plumber' });
  assert.equal((await tenant.request({ method: 'POST', url: `/api/v1/records/${id}/start`, payload: {} })).statusCode, 200);
  return id;
}

async function attach(tenant: Tenant, recordId: string, bytes: Buffer, mediaType: string, filename: string) {
  const response = await tenant.request({ method: 'POST', url: `/api/v1/records/${recordId}/attachments?filename=${filename}`, headers: { 'content-type': mediaType }, payload: bytes });
  assert.equal(response.statusCode, 201, response.body);
  return response.json() as { id: string; size: number; sha256: string };
}

async function sealedBundle(t: TestApp, tenant: Tenant, recordId: string): Promise<ProofBundle> {
  await t.context.proofs.log.sealPending();
  const response = await tenant.request({ method: 'GET', url: `/api/v1/records/${recordId}/proof` });
  assert.equal(response.statusCode, 200, response.body);
  return response.json();
}

function wo(...args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'src/main.ts'), ...args], { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, LOG_LEVEL: 'silent' } });
}

describe('attachments as evidence of a completion', () => {
  itOnEachDatabase('names each file’s name, media type, size and SHA-256 in the signed statement, and verifies a file against the proof (function and CLI)', async (t) => {
    const tenant = await t.newTenant();
    const recordId = await startedRecord(tenant);
    const photo = sampleFiles.jpeg(600 * 1024);
    const form = sampleFiles.pdf();
    const attachedPhoto = await attach(tenant, recordId, photo, 'image/jpeg', 'after.jpg');
    const attachedForm = await attach(tenant, recordId, form, 'application/pdf', 'signed-form.pdf');
    const digest = { name: 'meter.jpg', sha256: 'cd'.repeat(32), mediaType: 'image/jpeg' };
    const completed = await tenant.request({
      method: 'POST',
      url: `/api/v1/records/${recordId}/complete`,
      payload: { resolutionNotes: 'Replaced the washer', evidence: [{ attachmentId: attachedPhoto.id }, digest, { attachmentId: attachedForm.id }] },
    });
    assert.equal(completed.statusCode, 200, completed.body);

    const bundle = await sealedBundle(t, tenant, recordId);
    const jwks: Jwks = (await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json();
    const result = await verifyBundle(bundle, jwks);
    assert.ok(result.valid, JSON.stringify(result));
    assert.deepEqual(result.statement.evidence, [
      { attachmentId: attachedPhoto.id, name: 'after.jpg', mediaType: 'image/jpeg', size: photo.length, sha256: sha256Of(photo) },
      digest,
      { attachmentId: attachedForm.id, name: 'signed-form.pdf', mediaType: 'application/pdf', size: form.length, sha256: sha256Of(form) },
    ]);
    assert.equal(await sha256Hex(photo), sha256Of(photo));
    assert.equal(evidenceMatching(result.statement, sha256Of(photo), photo.length)?.name, 'after.jpg');
    assert.equal(evidenceMatching(result.statement, sha256Of(photo), photo.length + 1), undefined, 'the size an attached file’s entry names must agree');
    const stranger = sampleFiles.jpeg();
    assert.equal(evidenceMatching(result.statement, sha256Of(stranger), stranger.length), undefined);

    const outside = mkdtempSync(path.join(tmpdir(), 'wo-evidence-'));
    try {
      const file = (name: string, bytes: string | Buffer) => {
        writeFileSync(path.join(outside, name), bytes);
        return path.join(outside, name);
      };
      const [bundleFile, keysFile, photoFile, strangerFile] = [file('bundle.json', JSON.stringify(bundle)), file('jwks.json', JSON.stringify(jwks)), file('photo.jpg', photo), file('other.jpg', stranger)];
      const evidence = wo('proof', 'verify', bundleFile, '--keys', keysFile, '--file', photoFile, '--file', file('form.pdf', form));
      assert.equal(evidence.status, 0, evidence.stdout + evidence.stderr);
      assert.match(evidence.stdout, /^valid: /);
      assert.match(evidence.stdout, new RegExp(`^evidence: ${photoFile} is "after.jpg" \\(image/jpeg\\), ${photo.length} bytes, sha256 ${sha256Of(photo)}$`, 'm'));
      assert.match(evidence.stdout, /^evidence: .*form\.pdf is "signed-form.pdf"/m);
      const notEvidence = wo('proof', 'verify', bundleFile, '--keys', keysFile, '--file', photoFile, '--file', strangerFile, '--json');
      assert.equal(notEvidence.status, 1, notEvidence.stdout + notEvidence.stderr);
      const verdict = JSON.parse(notEvidence.stdout);
      // One verdict, as the SDK's and the /verify page's: a file that is not evidence makes it invalid.
      assert.equal(verdict.valid, false);
      assert.equal(verdict.reason, 'not_evidence');
      assert.match(verdict.detail, /other\.jpg .* is none of the 3 files the proof names\. The proof itself verifies: proof prf_/);
      assert.deepEqual(verdict.files.map((f: { evidence: { name: string } | null }) => f.evidence?.name ?? null), ['after.jpg', null]);
      const missing = wo('proof', 'verify', bundleFile, '--keys', keysFile, '--file', path.join(outside, 'missing.jpg'));
      assert.equal(missing.status, 2, 'a file that cannot be read is a usage error, not a verdict');
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  itOnEachDatabase('refuses as evidence a file of another work order or organization, or listed twice, with 400 and leaves the work order as it was', async (t) => {
    const tenant = await t.newTenant();
    const stranger = await t.newTenant();
    const recordId = await startedRecord(tenant);
    const otherRecord = await startedRecord(tenant);
    const theirRecord = await startedRecord(stranger);
    const own = await attach(tenant, recordId, sampleFiles.jpeg(), 'image/jpeg', 'own.jpg');
    const ofOtherRecord = await attach(tenant, otherRecord, sampleFiles.jpeg(), 'image/jpeg', 'other.jpg');
    const theirs = await attach(stranger, theirRecord, sampleFiles.jpeg(), 'image/jpeg', 'theirs.jpg');
    const complete = (evidence: unknown[]) => tenant.request({ method: 'POST', url: `/api/v1/records/${recordId}/complete`, payload: { resolutionNotes: 'Done', evidence } });

    const refused = await complete([{ attachmentId: own.id }, { attachmentId: ofOtherRecord.id }, { attachmentId: theirs.id }, { attachmentId: own.id }]);
    assert.equal(refused.statusCode, 400, refused.body);
    assert.equal(refused.json().code, 'validation_failed');
    assert.deepEqual(refused.json().errors.map((e: { field: string }) => e.field), ['body.evidence.1.attachmentId', 'body.evidence.2.attachmentId', 'body.evidence.3.attachmentId']);
    assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/records/${recordId}` })).json().status, 'IN_PROGRESS');
    // Nothing was marked as evidence by the refused completion: the file can still be deleted.
    assert.equal((await tenant.request({ method: 'DELETE', url: `/api/v1/records/${otherRecord}/attachments/${ofOtherRecord.id}` })).statusCode, 204);
    const malformed = await complete([{ attachmentId: own.id, sha256: 'ab'.repeat(32) }]);
    assert.equal(malformed.statusCode, 400);

    assert.equal((await complete([{ attachmentId: own.id }])).statusCode, 200);
    assert.equal((await tenant.request({ method: 'DELETE', url: `/api/v1/records/${recordId}/attachments/${own.id}` })).statusCode, 409);
  });
});
