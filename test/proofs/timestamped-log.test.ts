import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ContentInfo, SignedData, TSTInfo } from 'pkijs';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { systemClock } from '../../src/clock.js';
import { CheckpointTimestamping } from '../../src/proofs/checkpoint-timestamping.js';
import { parseCertificates, verifyTimestampToken } from '../../src/proofs/timestamp-token.js';
import { verifyBundle, type ProofBundle } from '../../src/proofs/verify.js';
import { spawnWo } from '../helpers/child-processes.js';
import { TEST_DIALECTS } from '../helpers/databases.js';
import { recordBody, seedCategory, startTestApp, waitFor, type TestApp, type Tenant } from '../helpers/test-app.js';
import { startTestTsa, type TestTsa, type TsaMode } from '../helpers/timestamp-authority.js';

async function complete(tenant: Tenant, categoryId: string): Promise<string> {
  const created = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { assignee: 'Bob Plumber' }) });
  assert.equal(created.statusCode, 201, created.body);
  const id = created.json().id as string;
  assert.equal((await tenant.request({ method: 'POST', url: `/api/v1/records/${id}/start`, payload: {} })).statusCode, 200);
  assert.equal((await tenant.request({ method: 'POST', url: `/api/v1/records/${id}/complete`, payload: { resolutionNotes: 'Done' } })).statusCode, 200);
  return id;
}

const bodyOf = (note: string) => note.slice(0, note.lastIndexOf('\n\n') + 1);

/** The serial number a token's TSTInfo carries, in hex. */
function serialOf(token: Uint8Array): string {
  const signed = new SignedData({ schema: ContentInfo.fromBER(token.slice().buffer).content });
  return Buffer.from(TSTInfo.fromBER(signed.encapContentInfo.eContent!.getValue()).serialNumber.valueBlock.valueHexView).toString('hex');
}

describe('checkpoints timestamped by an RFC 3161 TSA (`openssl ts` behind a loopback server)', () => {
  let tsa: TestTsa;
  before(async () => {
    tsa = await startTestTsa();
  });
  after(async () => {
    await tsa.remove();
  });

  it('the local TSA answers each refusal mode with a token the checks refuse for its reason', async () => {
    const roots = parseCertificates(readFileSync(tsa.rootsFile, 'utf8'));
    assert.ok(Array.isArray(roots));
    const body = 'tsa.test/log\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n';
    const nonce = new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]);
    const expected: Array<[TsaMode, string]> = [['wrong-imprint', 'imprint'], ['wrong-nonce', 'nonce'], ['no-eku', 'eku'], ['eku-not-critical', 'eku'], ['untrusted', 'untrusted_root']];
    try {
      tsa.mode = 'good';
      const good = await verifyTimestampToken(await tsa.stamp(body), body, { roots, nonce });
      assert.equal(good.valid, true, JSON.stringify(good));
      for (const [mode, problem] of expected) {
        tsa.mode = mode;
        const verdict = await verifyTimestampToken(await tsa.stamp(body), body, { roots, nonce });
        assert.equal(!verdict.valid && verdict.problem, problem, `${mode}: ${JSON.stringify(verdict)}`);
      }
      tsa.mode = 'refuse';
      await assert.rejects(tsa.stamp(body), /the TSA refused the request \(PKIStatus 2: test TSA refuses\)/);
    } finally {
      tsa.mode = 'good';
    }
  });

  it('the local TSA answers requests made in parallel, each token with a serial number of its own', async () => {
    // The timestamping job asks for every waiting checkpoint at once: a serial file shared by the
    // replies made one of them refuse with "Error during serial number generation".
    const roots = parseCertificates(readFileSync(tsa.rootsFile, 'utf8'));
    assert.ok(Array.isArray(roots));
    const body = 'tsa.test/log\n2\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n';
    tsa.mode = 'good';
    const tokens = await Promise.all(Array.from({ length: 8 }, () => tsa.stamp(body)));
    for (const token of tokens) assert.equal((await verifyTimestampToken(token, body, { roots })).valid, true);
    assert.equal(new Set(tokens.map(serialOf)).size, tokens.length);
  });

  it('`wo worker` refuses to start (exit 2) with WO_TSA_ROOTS unreadable or holding no certificate', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'wo-tsa-start-'));
    try {
      const cases: Array<[string, RegExp]> = [
        ['/nonexistent/roots.pem', /WO_TSA_ROOTS: cannot read \/nonexistent\/roots\.pem: ENOENT/],
        ['package.json', /WO_TSA_ROOTS \(.*package\.json\): no PEM certificate/],
      ];
      for (const [roots, message] of cases) {
        const run = spawnWo(['worker'], { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', WO_DATA_DIR: dataDir, WO_WORKER_PORT: '0', LOG_LEVEL: 'silent', WO_TSA_URL: tsa.url, WO_TSA_ROOTS: roots });
        assert.equal(await run.exited, 2, run.stderr);
        assert.match(run.stderr, message);
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  for (const dialect of TEST_DIALECTS) {
    describe(`a service with WO_TSA_URL [${dialect}]`, () => {
      let t: TestApp;
      let tenant: Tenant;
      let categoryId: string;
      before(async () => {
        t = await startTestApp(dialect, { env: { WO_TSA_URL: tsa.url, WO_TSA_ROOTS: tsa.rootsFile } });
        tenant = await t.newTenant();
        categoryId = await seedCategory(tenant);
      });
      after(async () => {
        await t.close();
      });

      async function bundleOf(recordId: string): Promise<ProofBundle> {
        const proof = await tenant.request({ method: 'GET', url: `/api/v1/records/${recordId}/proof` });
        assert.equal(proof.statusCode, 200, proof.body);
        return proof.json() as ProofBundle;
      }

      /** A timestamping job of its own, for a TSA answering in `mode`: it starts at the latest published checkpoint. */
      function stampingFor(mode: TsaMode) {
        tsa.mode = mode;
        const roots = parseCertificates(readFileSync(tsa.rootsFile, 'utf8'));
        assert.ok(Array.isArray(roots));
        return new CheckpointTimestamping(t.context.database.db, t.context.transparencyLog, { url: tsa.url, roots }, { timeoutMs: 5_000, idleMs: 50 }, systemClock, pino({ level: 'silent' }), new Registry());
      }

      it('timestamps each published checkpoint; the bundle carries the token, which verifies over its checkpoint body; /readyz and /metrics show the TSA up', async () => {
        tsa.mode = 'good';
        const recordId = await complete(tenant, categoryId);
        await t.context.proofs.log.sealPending();
        await waitFor(async () => {
          await t.context.timestamping!.step();
          return (await bundleOf(recordId)).timestampToken !== undefined;
        }, 20_000, 'the checkpoint’s token');
        const bundle = await bundleOf(recordId);
        const roots = parseCertificates(readFileSync(tsa.rootsFile, 'utf8'));
        assert.ok(Array.isArray(roots));
        const token = await verifyTimestampToken(Buffer.from(bundle.timestampToken!, 'base64'), bodyOf(bundle.checkpoint), { roots });
        assert.equal(token.valid && token.tsa, 'Test TSA');
        const verified = await verifyBundle(bundle, t.context.proofs.jwks(), { tsaRoots: readFileSync(tsa.rootsFile, 'utf8') });
        assert.equal(verified.valid && verified.timestamp?.rootChecked, true, JSON.stringify(verified));

        const ready = (await t.app.inject({ method: 'GET', url: '/readyz' })).json() as { timestampAuthority: { url: string; up: boolean; timestampedSize: number; lastError: string | null } };
        assert.equal(ready.timestampAuthority.url, tsa.url);
        assert.equal(ready.timestampAuthority.up, true);
        assert.equal(ready.timestampAuthority.timestampedSize, bundle.treeSize);
        // The worker's series are in /metrics once its jobs have started.
        t.context.jobs.start('worker');
        await t.context.jobs.stopAll();
        const metrics = await t.context.metrics.metrics();
        assert.match(metrics, /^wo_tsa_up 1$/m);
        assert.match(metrics, /^wo_tsa_requests_total\{outcome="timestamped"\} [1-9]/m);
      });

      it('keeps no token a TSA answers wrongly, for each refusal mode, and shows why in /readyz', async () => {
        const cases: Array<[TsaMode, RegExp]> = [
          ['wrong-imprint', /\(imprint\)/],
          ['wrong-nonce', /\(nonce\)/],
          ['no-eku', /\(eku\).*no extended key usage/],
          ['eku-not-critical', /\(eku\).*not critical/],
          ['untrusted', /\(untrusted_root\)/],
          ['refuse', /PKIStatus 2/],
          ['error', /answered 500/],
        ];
        try {
          for (const [mode, reason] of cases) {
            const recordId = await complete(tenant, categoryId);
            await t.context.proofs.log.sealPending();
            const stamping = stampingFor(mode);
            const asked = tsa.requests;
            await stamping.step();
            assert.ok(tsa.requests > asked, `${mode}: the TSA was asked`);
            assert.equal((await bundleOf(recordId)).timestampToken, undefined, `${mode}: no token kept`);
            const health = await stamping.health();
            assert.equal(health.up, false, mode);
            assert.match(String(health.lastError), reason, mode);
            const ready = (await t.app.inject({ method: 'GET', url: '/readyz' })).json() as { status: string; timestampAuthority: { up: boolean } };
            assert.deepEqual([ready.status, ready.timestampAuthority.up], ['ready', false], mode);
          }
        } finally {
          tsa.mode = 'good';
        }
      });

      it('a TSA that is down stops neither sealing nor delivery; its token comes once it is back', async () => {
        await tsa.stop();
        let recordId: string;
        try {
          recordId = await complete(tenant, categoryId);
          await t.context.proofs.log.sealPending();
          // Delivered at once, without a token: nothing waits for the TSA.
          assert.equal((await bundleOf(recordId)).timestampToken, undefined);
          await t.context.timestamping!.step();
          const ready = (await t.app.inject({ method: 'GET', url: '/readyz' })).json() as { status: string; timestampAuthority: { up: boolean; lastError: string } };
          assert.equal(ready.status, 'ready');
          assert.equal(ready.timestampAuthority.up, false);
          assert.match(await t.context.metrics.metrics(), /^wo_tsa_up 0$/m);
          // Completions are still sealed while it is down.
          const another = await complete(tenant, categoryId);
          assert.ok((await t.context.proofs.log.sealPending())?.sealed);
          assert.equal((await bundleOf(another)).timestampToken, undefined);
        } finally {
          await tsa.start();
        }
        tsa.mode = 'good';
        await waitFor(async () => {
          await t.context.timestamping!.step();
          return (await bundleOf(recordId)).timestampToken !== undefined;
        }, 60_000, 'the token once the TSA is back');
        const verified = await verifyBundle(await bundleOf(recordId), t.context.proofs.jwks(), { tsaRoots: readFileSync(tsa.rootsFile, 'utf8') });
        assert.equal(verified.valid, true, JSON.stringify(verified));
        // Up again once a request succeeds; a retry still in flight from the outage may answer first on a loaded machine.
        await waitFor(async () => {
          await t.context.timestamping!.step();
          return ((await t.app.inject({ method: 'GET', url: '/readyz' })).json() as { timestampAuthority: { up: boolean } }).timestampAuthority.up;
        }, 60_000, '/readyz showing the TSA up again');
      });
    });
  }
});
