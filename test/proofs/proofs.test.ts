import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { compactVerify, createLocalJWKSet } from 'jose';
import { sql } from 'kysely';
import { TEST_DIALECTS } from '../helpers/databases.js';
import { recordBody, seedCategory, startTestApp, waitFor, type TestApp, type Tenant } from '../helpers/test-app.js';
import { verifyBundle, BUNDLE_MEDIA_TYPE, type Jwks, type ProofBundle } from '../../src/proofs/verify.js';
import { parseSignedCheckpoint, parseVerifierKey } from '../../src/proofs/checkpoint.js';
import { verifyConsistency } from '../../src/proofs/merkle.js';
import { listCheckpoints } from '../../src/proofs/repository.js';
import { rotateStatementKey, sha256Sync } from '../../src/proofs/keys.js';

const repoRoot = path.resolve(import.meta.dirname, '..', '..');

async function completedRecord(tenant: Tenant, categoryId: string, evidence?: unknown[]): Promise<string> {
  const created = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { assignee: 'Bob Plumber' }) });
  assert.equal(created.statusCode, 201, created.body);
  const id = created.json().id as string;
  assert.equal((await tenant.request({ method: 'POST', url: `/api/v1/records/${id}/start`, payload: {} })).statusCode, 200);
  const completed = await tenant.request({
    method: 'POST',
    url: `/api/v1/records/${id}/complete`,
    payload: { resolutionNotes: 'Replaced the washer', ...(evidence ? { evidence } : {}) },
  });
  assert.equal(completed.statusCode, 200, completed.body);
  return id;
}

function statementOf(bundle: ProofBundle): Record<string, unknown> {
  return JSON.parse(Buffer.from(bundle.jws.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

for (const dialect of TEST_DIALECTS) {
  describe(`completion proofs (${dialect})`, () => {
    let t: TestApp;
    let tenant: Tenant;
    let categoryId: string;
    let jwks: Jwks;

    before(async () => {
      t = await startTestApp(dialect);
      tenant = await t.newTenant();
      categoryId = await seedCategory(tenant);
      const response = await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
      assert.equal(response.statusCode, 200);
      jwks = response.json();
    });
    after(async () => t.close());

    async function fetchBundle(url: string, who: Tenant = tenant): Promise<ProofBundle> {
      const response = await who.request({ method: 'GET', url });
      assert.equal(response.statusCode, 200, response.body);
      // Fastify normalizes the parameter spelling: application/vnd.wo.proof+json; version="1"; charset=utf-8
      assert.match(String(response.headers['content-type']), /^application\/vnd\.wo\.proof\+json; version="?1"?/);
      assert.equal(response.json().mediaType, BUNDLE_MEDIA_TYPE);
      return response.json();
    }

    it('answers 202 while the proof is pending and a verifiable bundle once the sequencer sealed it', async () => {
      const recordId = await completedRecord(tenant, categoryId, [{ name: 'after.jpg', sha256: 'ab'.repeat(32), mediaType: 'image/jpeg' }]);
      const pending = await tenant.request({ method: 'GET', url: `/api/v1/records/${recordId}/proof` });
      assert.equal(pending.statusCode, 202, pending.body);
      assert.equal(pending.headers['retry-after'], '1');
      assert.equal(pending.json().status, 'pending');

      await t.context.proofs.log.sealPending();
      const bundle = await fetchBundle(`/api/v1/records/${recordId}/proof`);
      assert.equal(bundle.recordId, recordId);
      assert.equal(bundle.proofId, pending.json().proofId);
      // `status` tells the 200 from the 202; no signature covers it, so a bundle saved before it existed verifies too.
      assert.equal(bundle.status, 'sealed');
      const result = await verifyBundle(bundle, jwks);
      assert.equal(result.valid, true, JSON.stringify(result));
      const { status: _status, ...savedBeforeStatus } = bundle;
      assert.equal((await verifyBundle(savedBeforeStatus, jwks)).valid, true);
      const statement = statementOf(bundle);
      assert.equal(statement.completedAt, (await tenant.request({ method: 'GET', url: `/api/v1/records/${recordId}` })).json().completedAt);
      assert.deepEqual(statement.evidence, [{ name: 'after.jpg', sha256: 'ab'.repeat(32), mediaType: 'image/jpeg' }]);
      assert.deepEqual((statement.history as Array<{ action: string }>).map((h) => h.action), ['created', 'start', 'complete']);
      assert.equal((statement.history as Array<{ actor: string }>)[2]!.actor, `api_key:${tenant.keyId}`);
      assert.deepEqual(await fetchBundle(`/api/v1/proofs/${bundle.proofId}`), bundle);
    });

    if (dialect === 'postgres') {
      it('keeps a sealed statement whole in its row, signature included, rather than in the TOAST table (migration 0018)', async () => {
        // Digests as random as real ones: a signature over them does not compress.
        const photos = Array.from({ length: 8 }, (_, i) => ({ name: `photo-${i}.jpg`, sha256: randomBytes(32).toString('hex'), mediaType: 'image/jpeg' }));
        const recordId = await completedRecord(tenant, categoryId, photos);
        await t.context.proofs.log.sealPending();
        const { db } = t.context.database;
        const statement = await db.selectFrom('proof_statements').select((eb) => [eb.fn<number>('length', ['jws']).as('jws_length')]).where('record_id', '=', recordId).executeTakeFirstOrThrow();
        // Long enough that PostgreSQL's default threshold (~2 KB a row) would have moved it out.
        assert.ok(statement.jws_length > 2_100, `a ${statement.jws_length}-character JWS`);
        const { rows } = await sql<{ toast: string }>`SELECT reltoastrelid::regclass::text AS toast FROM pg_class WHERE oid = 'proof_statements'::regclass`.execute(db);
        const stored = await sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.raw(rows[0]!.toast)}`.execute(db);
        assert.equal(Number(stored.rows[0]!.n), 0, 'nothing of any statement in the TOAST table');
      });
    }

    it('lets a generic JOSE library verify the statement from the published JWKS alone', async () => {
      const recordId = await completedRecord(tenant, categoryId);
      await t.context.proofs.log.sealPending();
      const bundle = await fetchBundle(`/api/v1/records/${recordId}/proof`);
      const { payload, protectedHeader } = await compactVerify(bundle.jws, createLocalJWKSet(jwks as never));
      assert.equal(protectedHeader.kid, bundle.keys.statementKid);
      assert.equal((JSON.parse(new TextDecoder().decode(payload)) as { record: { id: string } }).record.id, recordId);
    });

    it('produces a second proof naming the first when a work order is reopened and completed again', async () => {
      const recordId = await completedRecord(tenant, categoryId);
      await t.context.proofs.log.sealPending();
      const first = await fetchBundle(`/api/v1/records/${recordId}/proof`);
      assert.equal((await tenant.request({ method: 'POST', url: `/api/v1/records/${recordId}/reopen`, payload: { reason: 'still leaks' } })).statusCode, 200);
      assert.equal((await tenant.request({ method: 'POST', url: `/api/v1/records/${recordId}/complete`, payload: { resolutionNotes: 'New tap' } })).statusCode, 200);
      await t.context.proofs.log.sealPending();
      const second = await fetchBundle(`/api/v1/records/${recordId}/proof`);
      assert.notEqual(second.proofId, first.proofId);
      assert.equal(statementOf(second).supersedes, first.proofId);
      assert.equal(statementOf(first).supersedes, null);
      assert.equal(statementOf(second).resolutionNotes, 'New tap');
      assert.ok(second.leafIndex > first.leafIndex);
      for (const bundle of [first, second]) assert.equal((await verifyBundle(bundle, jwks)).valid, true);
    });

    it('hides proofs from other organizations and requires the proofs:read scope', async () => {
      const recordId = await completedRecord(tenant, categoryId);
      await t.context.proofs.log.sealPending();
      const bundle = await fetchBundle(`/api/v1/records/${recordId}/proof`);
      const stranger = await t.newTenant();
      for (const url of [`/api/v1/records/${recordId}/proof`, `/api/v1/proofs/${bundle.proofId}`]) {
        const response = await stranger.request({ method: 'GET', url });
        assert.equal(response.statusCode, 404, url);
        assert.match(String(response.headers['content-type']), /problem\+json/);
      }
      const reader = await t.newTenant(['records:read']);
      assert.equal((await reader.request({ method: 'GET', url: `/api/v1/proofs/${bundle.proofId}` })).statusCode, 403);
      assert.equal((await t.app.inject({ method: 'GET', url: `/api/v1/proofs/${bundle.proofId}` })).statusCode, 401);
      assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/proofs/prf_nope' })).statusCode, 404);
      const open = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId) });
      assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/records/${open.json().id}/proof` })).statusCode, 404);
    });

    it('refuses to complete with data a canonical statement cannot carry, with a 422 instead of a 500', async () => {
      // The API refuses such a number at the edge (400); here it reached the database another way.
      assert.equal((await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { metadata: { big: 2 ** 60 } }) })).statusCode, 400);
      const created = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { assignee: 'Bob', metadata: { big: 1 } }) });
      const id = created.json().id as string;
      // Raising the version, as any writer of a work order must (docs/deployment.md, "Changing rows by hand").
      await t.context.database.db
        .updateTable('records')
        .set((eb) => ({ metadata: `{"big":${2 ** 60}}`, version: eb('version', '+', 1) }))
        .where('id', '=', id)
        .execute();
      await tenant.request({ method: 'POST', url: `/api/v1/records/${id}/start`, payload: {} });
      const response = await tenant.request({ method: 'POST', url: `/api/v1/records/${id}/complete`, payload: { resolutionNotes: 'done' } });
      assert.equal(response.statusCode, 422, response.body);
      assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/records/${id}` })).json().status, 'IN_PROGRESS');
    });

    it('publishes the checkpoint, the verifier key, inclusion and consistency proofs without authentication', async () => {
      await completedRecord(tenant, categoryId);
      await t.context.proofs.log.sealPending();
      const checkpoint = await t.app.inject({ method: 'GET', url: '/api/v1/transparency/checkpoint' });
      assert.equal(checkpoint.statusCode, 200);
      assert.match(String(checkpoint.headers['content-type']), /^text\/plain/);
      const parsed = parseSignedCheckpoint(checkpoint.body);
      assert.ok(typeof parsed !== 'string', String(parsed));
      const verifierKey = await t.app.inject({ method: 'GET', url: '/api/v1/transparency/verifier-key' });
      const key = parseVerifierKey(verifierKey.body);
      assert.ok(key);
      assert.equal(key.name, parsed.origin);
      assert.equal(jwks.keys.find((k) => k['x-wo-role'] === 'transparency-log')!['x-wo-verifier-key'], verifierKey.body.trim());

      const size = parsed.treeSize;
      const inclusion = await t.app.inject({ method: 'GET', url: `/api/v1/transparency/inclusion?leafIndex=0&treeSize=${size}` });
      assert.equal(inclusion.statusCode, 200, inclusion.body);
      assert.equal(inclusion.json().treeSize, size);
      const consistency = await t.app.inject({ method: 'GET', url: `/api/v1/transparency/consistency?first=1&second=${size}` });
      assert.equal(consistency.statusCode, 200, consistency.body);

      for (const url of [
        `/api/v1/transparency/inclusion?leafIndex=0&treeSize=${size + 1}`,
        `/api/v1/transparency/inclusion?leafIndex=${size}&treeSize=${size}`,
        '/api/v1/transparency/inclusion?leafIndex=x&treeSize=1',
        '/api/v1/transparency/inclusion?treeSize=1',
        `/api/v1/transparency/consistency?first=2&second=1`,
        `/api/v1/transparency/consistency?first=0&second=1`,
        `/api/v1/transparency/consistency?first=1&second=${size + 1}`,
        '/api/v1/transparency/checkpoint?treeSize=-1',
      ]) {
        const response = await t.app.inject({ method: 'GET', url });
        assert.equal(response.statusCode, 400, `${url}: ${response.body}`);
        assert.equal(response.json().code, 'validation_failed');
      }
      assert.equal((await t.app.inject({ method: 'GET', url: `/api/v1/transparency/checkpoint?treeSize=${size + 10}` })).statusCode, 404);
    });

    it('emits record.proof_delivered exactly once per completion, only once the bundle is fetchable, with consistent checkpoints', async () => {
      const job = t.context.backgroundJobs.find((j) => j.name === 'proof-sequencer')!;
      const { db } = t.context.database;
      const seen = new Set<string>();
      const fetchedOnEvent = new Map<string, number>();
      job.start();
      try {
        const recordIds: string[] = [];
        for (let round = 0; round < 4; round++) {
          recordIds.push(...(await Promise.all([0, 1, 2].map(() => completedRecord(tenant, categoryId)))));
          // Every delivered event is checked the moment it shows up in the outbox.
          await waitFor(async () => {
            const events = await db.selectFrom('outbox_events').select(['payload']).where('type', '=', 'record.proof_delivered').where('org_id', '=', tenant.orgId).execute();
            for (const { payload } of events) {
              const { proofId, proofUrl, recordId } = JSON.parse(payload) as { proofId: string; proofUrl: string; recordId: string };
              if (seen.has(proofId)) continue;
              seen.add(proofId);
              assert.ok(proofUrl.endsWith(`/api/v1/proofs/${proofId}`));
              const response = await tenant.request({ method: 'GET', url: new URL(proofUrl).pathname });
              fetchedOnEvent.set(proofId, response.statusCode);
              assert.equal(response.json().recordId, recordId);
            }
            const delivered = await db.selectFrom('proof_statements').select('record_id').where('status', '=', 'sealed').where('record_id', 'in', recordIds).execute();
            return delivered.length === recordIds.length;
          }, 10_000, 'every completion to be sealed');
        }
        const events = await db.selectFrom('outbox_events').select(['payload']).where('type', '=', 'record.proof_delivered').where('org_id', '=', tenant.orgId).execute();
        const perRecord = new Map<string, number>();
        for (const { payload } of events) {
          const { recordId } = JSON.parse(payload) as { recordId: string };
          perRecord.set(recordId, (perRecord.get(recordId) ?? 0) + 1);
        }
        for (const id of recordIds) assert.equal(perRecord.get(id), 1, `events for ${id}`);
        assert.ok([...fetchedOnEvent.values()].every((status) => status === 200), JSON.stringify([...fetchedOnEvent]));
      } finally {
        await job.stop();
      }

      // An auditor's check: every checkpoint signed during this run is consistent with every later one.
      const checkpoints = (await listCheckpoints(db)).map((row) => parseSignedCheckpoint(row.note));
      assert.ok(checkpoints.length >= 5);
      for (const [i, a] of checkpoints.entries()) {
        assert.ok(typeof a !== 'string');
        for (const b of checkpoints.slice(i + 1)) {
          assert.ok(typeof b !== 'string');
          const response = await t.app.inject({ method: 'GET', url: `/api/v1/transparency/consistency?first=${a.treeSize}&second=${b.treeSize}` });
          const proof = (response.json().consistencyProof as string[]).map((h) => Buffer.from(h, 'base64'));
          assert.ok(await verifyConsistency(sha256Sync, a.treeSize, b.treeSize, a.rootHash, b.rootHash, proof), `${a.treeSize} → ${b.treeSize}`);
        }
      }
    });

    it('keeps publishing the old statement key after a rotation, so earlier proofs still verify', async () => {
      const recordId = await completedRecord(tenant, categoryId);
      await t.context.proofs.log.sealPending();
      const bundle = await fetchBundle(`/api/v1/records/${recordId}/proof`);
      const { kid } = rotateStatementKey(t.config.keysDir, { now: () => new Date(Date.now() + 60_000) });
      const rotated: Jwks = (await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json();
      const statementKids = rotated.keys.filter((k) => k['x-wo-role'] === 'statement').map((k) => k.kid);
      assert.ok(statementKids.includes(kid) && statementKids.includes(bundle.keys.statementKid), JSON.stringify(statementKids));
      assert.equal((await verifyBundle(bundle, rotated)).valid, true);
    });

    if (dialect === 'sqlite') {
      it('verifies a bundle offline with the CLI after the database is deleted, also after a key rotation', async () => {
        const recordId = await completedRecord(tenant, categoryId);
        await t.context.proofs.log.sealPending();
        const bundle = await fetchBundle(`/api/v1/records/${recordId}/proof`);
        const outside = mkdtempSync(path.join(tmpdir(), 'wo-offline-'));
        try {
          writeFileSync(path.join(outside, 'bundle.json'), JSON.stringify(bundle));
          writeFileSync(path.join(outside, 'tampered.json'), JSON.stringify({ ...bundle, leafIndex: bundle.leafIndex + 1 }));
          writeFileSync(path.join(outside, 'jwks.json'), JSON.stringify(jwks));
          cpSync(t.config.keysDir, path.join(outside, 'keys'), { recursive: true });
          await t.close();
          rmSync(t.dataDir, { recursive: true, force: true });

          const cli = (...args: string[]) =>
            spawnSync(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'src/main.ts'), ...args], {
              cwd: repoRoot,
              encoding: 'utf8',
              env: { ...process.env, WO_DATA_DIR: path.join(outside, 'no-data'), WO_KEYS_DIR: path.join(outside, 'keys'), LOG_LEVEL: 'silent' },
            });
          const wo = (...args: string[]) => cli('proof', 'verify', ...args);
          const file = (name: string) => path.join(outside, name);
          const valid = wo(file('bundle.json'), '--keys', file('jwks.json'));
          assert.equal(valid.status, 0, valid.stdout + valid.stderr);
          assert.match(valid.stdout, /^valid: /);
          const rotation = cli('proof', 'rotate-key');
          assert.equal(rotation.status, 0, rotation.stdout + rotation.stderr);
          assert.match(rotation.stdout, /^new statement key \S+; retired \(still published\): \S+/);
          // After the rotation the local key directory still vouches for the old statement key.
          const withLocalKeys = wo(file('bundle.json'));
          assert.equal(withLocalKeys.status, 0, withLocalKeys.stdout + withLocalKeys.stderr);
          const tampered = wo(file('tampered.json'), '--keys', file('jwks.json'));
          assert.equal(tampered.status, 1);
          assert.match(tampered.stdout, /^invalid: leaf_not_in_tree/);
          // Input that cannot be read is a usage error (exit 2), not a verdict on the proof.
          writeFileSync(file('not-json.json'), 'not json');
          for (const args of [[file('missing.json'), '--keys', file('jwks.json')], [file('bundle.json'), '--keys', file('missing-jwks.json')], [file('not-json.json'), '--keys', file('jwks.json')]]) {
            const unreadable = wo(...args);
            assert.equal(unreadable.status, 2, `${args.join(' ')}: ${unreadable.stdout}${unreadable.stderr}`);
            assert.doesNotMatch(unreadable.stdout, /^valid/);
          }
        } finally {
          rmSync(outside, { recursive: true, force: true });
          t = await startTestApp(dialect);
        }
      });
    }
  });
}
