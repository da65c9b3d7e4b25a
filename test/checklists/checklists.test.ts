import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe } from 'node:test';
import { createWorkOrder, itOnEachDatabase, seedCategory, type TestApp, type Tenant } from '../helpers/test-app.js';
import { dispatchAll } from '../helpers/event-feed.js';
import { sampleFiles, sha256Of } from '../helpers/files.js';
import { pngImage } from '../helpers/png.js';
import { verifyBundle, type Jwks, type ProofBundle } from '../../src/proofs/verify.js';

async function attach(tenant: Tenant, recordId: string, bytes: Buffer, mediaType: string, filename: string) {
  const response = await tenant.request({ method: 'POST', url: `/api/v1/records/${recordId}/attachments?filename=${filename}`, headers: { 'content-type': mediaType }, payload: bytes });
  assert.equal(response.statusCode, 201, response.body);
  return response.json() as { id: string };
}

async function sealedBundle(t: TestApp, tenant: Tenant, recordId: string): Promise<ProofBundle> {
  await t.context.proofs.log.sealPending();
  const response = await tenant.request({ method: 'GET', url: `/api/v1/records/${recordId}/proof` });
  assert.equal(response.statusCode, 200, response.body);
  return response.json();
}

const repoRoot = path.resolve(import.meta.dirname, '..', '..');
function wo(...args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'src/main.ts'), ...args], { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, LOG_LEVEL: 'silent' } });
}

/** A boiler inspection: six typed items, a pressure range whose failure raises a follow-up, a signature. */
export async function boilerInspection(tenant: Tenant, categoryId: string, meterId?: string) {
  const items = [
    { key: 'flue_clear', label: 'Flue clear', type: 'pass_fail', required: true },
    { key: 'pressure', label: 'System pressure', type: 'number', required: true, min: 1, max: 2, unit: 'bar', onFail: { categoryId, priority: 'HIGH' } },
    { key: 'gas_tight', label: 'Gas tightness tested', type: 'checkbox', required: true },
    { key: 'fuel', label: 'Fuel', type: 'select', options: ['gas', 'oil'] },
    { key: 'notes', label: 'Notes', type: 'text' },
    meterId ? { key: 'hours', label: 'Burner hours', type: 'meter_reading', meterId } : { key: 'photo', label: 'Photo of the burner', type: 'photo' },
    { key: 'signed_off', label: 'Customer signature', type: 'signature', required: true },
  ];
  const response = await tenant.request({ method: 'POST', url: '/api/v1/checklists', payload: { name: 'Boiler inspection', items } });
  assert.equal(response.statusCode, 201, response.body);
  return response.json() as { id: string; version: number };
}

describe('checklists', () => {
  itOnEachDatabase('gates completion for every required item, checks answers against their types, and raises one follow-up for a failed item', async (t) => {
    const tenant = await t.newTenant();
    const categoryId = await seedCategory(tenant);
    const checklist = await boilerInspection(tenant, categoryId);
    const recordId = await createWorkOrder(tenant, { assignee: 'Bob Plumber', checklistIds: [checklist.id] });
    const other = await createWorkOrder(tenant);
    assert.equal((await tenant.request({ method: 'POST', url: `/api/v1/records/${recordId}/start`, payload: {} })).statusCode, 200);
    const answer = (key: string, value: unknown) => tenant.request({ method: 'PUT', url: `/api/v1/records/${recordId}/checklists/${checklist.id}/items/${key}`, payload: { value } });

    const before = await tenant.request({ method: 'GET', url: `/api/v1/records/${recordId}/checklists` });
    assert.equal(before.statusCode, 200, before.body);
    assert.deepEqual(before.json().checklists[0].missing, ['flue_clear', 'pressure', 'gas_tight', 'signed_off']);
    const early = await tenant.request({ method: 'POST', url: `/api/v1/records/${recordId}/complete`, payload: { resolutionNotes: 'Done' } });
    assert.equal(early.statusCode, 409, early.body);
    assert.equal(early.json().code, 'checklist_incomplete');
    assert.equal(early.json().missing.length, 4);

    for (const [key, value] of [['pressure', '1.5'], ['flue_clear', true], ['gas_tight', 'yes'], ['fuel', 'coal'], ['signed_off', { name: 'Ann' }]] as const) {
      const wrong = await answer(key, value);
      assert.equal(wrong.statusCode, 400, `${key}: ${wrong.body}`);
      assert.equal(wrong.json().errors[0].field, 'body.value');
    }
    const elsewhere = await attach(tenant, other, pngImage(4, 4, () => [0, 0, 0]), 'image/png', 'sig.png');
    const foreign = await answer('signed_off', { name: 'Ann', attachmentId: elsewhere.id });
    assert.equal(foreign.statusCode, 400, foreign.body);
    assert.equal((await answer('unknown', true)).statusCode, 404);

    const high = await answer('pressure', 2.7);
    assert.equal(high.statusCode, 200, high.body);
    assert.equal(high.json().failed, true);
    const followUpId = high.json().followUpRecordId as string;
    assert.match(followUpId, /^rec_/);
    const again = await answer('pressure', 2.9);
    assert.equal(again.json().followUpRecordId, followUpId);
    const followUp = (await tenant.request({ method: 'GET', url: `/api/v1/records/${followUpId}` })).json();
    assert.deepEqual(followUp.source, { type: 'checklist', recordId, checklistId: checklist.id, item: 'pressure' });
    assert.equal(followUp.priority, 'HIGH');

    const signature = pngImage(8, 4, (x) => [x * 30, 0, 0]);
    const photo = sampleFiles.jpeg(2048);
    const signatureFile = await attach(tenant, recordId, signature, 'image/png', 'signature.png');
    const photoFile = await attach(tenant, recordId, photo, 'image/jpeg', 'burner.jpg');
    for (const [key, value] of [['flue_clear', 'pass'], ['gas_tight', true], ['fuel', 'gas'], ['notes', 'Serviced'], ['photo', { attachmentIds: [photoFile.id] }]] as const) {
      const response = await answer(key, value);
      assert.equal(response.statusCode, 200, `${key}: ${response.body}`);
      assert.equal(response.json().failed, false);
    }
    assert.equal((await tenant.request({ method: 'POST', url: `/api/v1/records/${recordId}/complete`, payload: { resolutionNotes: 'Done' } })).json().missing[0].key, 'signed_off');
    assert.equal((await answer('signed_off', { name: 'Ann Example', attachmentId: signatureFile.id })).statusCode, 200);
    const completed = await tenant.request({ method: 'POST', url: `/api/v1/records/${recordId}/complete`, payload: { resolutionNotes: 'Done' } });
    assert.equal(completed.statusCode, 200, completed.body);
    assert.equal((await answer('notes', 'Too late')).statusCode, 409);

    await dispatchAll(t.context);
    const feed = (await tenant.request({ method: 'GET', url: '/api/v1/events?type=record.checklist_answered&limit=100' })).json() as { events: { payload: { key: string; followUpRecordId: string | null } }[] };
    assert.equal(feed.events.length, 8);
    assert.deepEqual(feed.events.filter((e) => e.payload.followUpRecordId !== null).map((e) => [e.payload.key, e.payload.followUpRecordId]), [['pressure', followUpId]]);
    const records = await tenant.request({ method: 'GET', url: `/api/v1/records?limit=100` });
    assert.equal(records.json().records.filter((r: { source: { recordId?: string } | null }) => r.source?.recordId === recordId).length, 1);

    const bundle = await sealedBundle(t, tenant, recordId);
    const jwks: Jwks = (await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json();
    const result = await verifyBundle(bundle, jwks);
    assert.ok(result.valid, JSON.stringify(result));
    assert.equal(result.statement.v, 2);
    const [stated] = result.statement.checklists!;
    assert.equal(stated!.checklistId, checklist.id);
    assert.equal(stated!.version, 1);
    assert.deepEqual(stated!.answers.map((a) => a.key), ['flue_clear', 'pressure', 'gas_tight', 'fuel', 'notes', 'photo', 'signed_off']);
    assert.equal(stated!.answers[1]!.value, 2.9);
    assert.equal(stated!.answers[1]!.failed, true);
    assert.equal(stated!.answers[6]!.files![0]!.sha256, sha256Of(signature));
    assert.equal(stated!.answers[5]!.files![0]!.sha256, sha256Of(photo));

    // Offline, the signature image is shown to belong to the proof; another image is not.
    const outside = mkdtempSync(path.join(tmpdir(), 'wo-checklist-'));
    try {
      const file = (name: string, bytes: string | Buffer) => {
        writeFileSync(path.join(outside, name), bytes);
        return path.join(outside, name);
      };
      const [bundleFile, keysFile] = [file('bundle.json', JSON.stringify(bundle)), file('jwks.json', JSON.stringify(jwks))];
      const verified = wo('proof', 'verify', bundleFile, '--keys', keysFile, '--file', file('signature.png', signature));
      assert.equal(verified.status, 0, verified.stdout + verified.stderr);
      assert.match(verified.stdout, /signature\.png is "signature\.png \(checklist Boiler inspection, item signed_off: signature\)"/);
      const stranger = wo('proof', 'verify', bundleFile, '--keys', keysFile, '--file', file('other.png', pngImage(8, 4, () => [9, 9, 9])));
      assert.equal(stranger.status, 1, stranger.stdout + stranger.stderr);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  itOnEachDatabase('makes a new version on PATCH while work orders keep the version they were given; schedules give theirs', async (t) => {
    const tenant = await t.newTenant();
    const categoryId = await seedCategory(tenant);
    const created = await tenant.request({ method: 'POST', url: '/api/v1/checklists', payload: { name: 'Daily', items: [{ key: 'ok', label: 'All fine', type: 'checkbox', required: true }] } });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().id as string;
    const repeated = await tenant.request({ method: 'POST', url: '/api/v1/checklists', payload: { name: 'Twice', items: [{ key: 'a', label: 'A', type: 'checkbox' }, { key: 'a', label: 'B', type: 'text' }] } });
    assert.equal(repeated.statusCode, 400, repeated.body);
    const first = await createWorkOrder(tenant, { checklistIds: [id] });
    const patched = await tenant.request({ method: 'PATCH', url: `/api/v1/checklists/${id}`, payload: { items: [{ key: 'ok', label: 'All fine', type: 'checkbox', required: true }, { key: 'temp', label: 'Temperature', type: 'number', required: true }] } });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(patched.json().version, 2);
    const second = await createWorkOrder(tenant, { checklistIds: [id] });
    const of = async (recordId: string) => (await tenant.request({ method: 'GET', url: `/api/v1/records/${recordId}/checklists` })).json().checklists[0];
    assert.deepEqual([(await of(first)).version, (await of(first)).missing], [1, ['ok']]);
    assert.deepEqual([(await of(second)).version, (await of(second)).missing], [2, ['ok', 'temp']]);
    const unknown = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: { categoryId, address: 'x', requesterName: 'y', description: 'z', checklistIds: ['chk_missing'] } });
    assert.equal(unknown.statusCode, 422, unknown.body);

    const plain = await createWorkOrder(tenant, { assignee: 'Bob Plumber' });
    assert.equal((await tenant.request({ method: 'POST', url: `/api/v1/records/${plain}/start`, payload: {} })).statusCode, 200);
    const attached = await tenant.request({ method: 'POST', url: `/api/v1/records/${plain}/checklists`, payload: { checklistId: id } });
    assert.equal(attached.statusCode, 200, attached.body);
    assert.equal(attached.json().checklists[0].version, 2);
    const gated = await tenant.request({ method: 'POST', url: `/api/v1/records/${plain}/complete`, payload: { resolutionNotes: 'Done' } });
    assert.equal(gated.json().code, 'checklist_incomplete', gated.body);

    const badSchedule = await tenant.request({ method: 'POST', url: '/api/v1/schedules', payload: { name: 'Daily round', template: { categoryId, description: 'Round', checklistIds: ['chk_missing'] }, triggers: [{ type: 'interval', every: 'P1D' }] } });
    assert.equal(badSchedule.statusCode, 422, badSchedule.body);
    assert.equal(badSchedule.json().errors[0].field, 'body.template.checklistIds.0');
    const schedule = await tenant.request({ method: 'POST', url: '/api/v1/schedules', payload: { name: 'Daily round', template: { categoryId, description: 'Round', checklistIds: [id] }, triggers: [{ type: 'interval', every: 'P1D' }], leadTime: 'P2D' } });
    assert.equal(schedule.statusCode, 201, schedule.body);
    await t.context.scheduleGenerator.runOnce();
    const listed = (await tenant.request({ method: 'GET', url: `/api/v1/records?categoryId=${categoryId}&limit=100` })).json().records as { source: { scheduleId?: string } | null; checklists: { checklistId: string; version: number }[] }[];
    const fromSchedule = listed.filter((r) => r.source?.scheduleId === schedule.json().id);
    assert.ok(fromSchedule.length >= 1, JSON.stringify(listed.map((r) => r.source)));
    assert.deepEqual(fromSchedule[0]!.checklists.map((c) => [c.checklistId, c.version]), [[id, 2]]);
  });
});
