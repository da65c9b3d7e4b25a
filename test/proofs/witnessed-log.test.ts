import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DIALECTS } from '../helpers/databases.js';
import { recordBody, seedCategory, startTestApp, waitFor, type TestApp, type Tenant } from '../helpers/test-app.js';
import { spawnWo } from '../helpers/child-processes.js';
import { startWitness, type ChildWitness } from '../helpers/witnesses.js';
import { pino } from 'pino';
import { readFileSync } from 'node:fs';
import { Registry } from 'prom-client';
import { systemClock } from '../../src/clock.js';
import { parseWitnessPolicySync } from '../../src/proofs/witness-policy.js';
import { CheckpointWitnessing, type SubmittingPolicy } from '../../src/proofs/checkpoint-witnessing.js';
import { buildApp } from '../../src/app.js';
import { createContext, type AppContext } from '../../src/context.js';
import { verifyBundle, type ProofBundle } from '../../src/proofs/verify.js';
import { parseSignedCheckpoint } from '../../src/proofs/checkpoint.js';
import { cosignerKeyIdSync, formatCosignerVkey } from '../../src/proofs/cosignature.js';

const sha256 = (data: Uint8Array): Uint8Array => createHash('sha256').update(data).digest();

async function complete(tenant: Tenant, categoryId: string): Promise<string> {
  const created = await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { assignee: 'Bob Plumber' }) });
  assert.equal(created.statusCode, 201, created.body);
  const id = created.json().id as string;
  assert.equal((await tenant.request({ method: 'POST', url: `/api/v1/records/${id}/start`, payload: {} })).statusCode, 200);
  assert.equal((await tenant.request({ method: 'POST', url: `/api/v1/records/${id}/complete`, payload: { resolutionNotes: 'Done' } })).statusCode, 200);
  return id;
}

/** A vkey of a witness that exists nowhere: a policy naming it can never be satisfied by it. */
function strangerVkey(name: string): string {
  const { publicKey } = generateKeyPairSync('ed25519');
  const raw = new Uint8Array(publicKey.export({ format: 'der', type: 'spki' }).subarray(-32));
  return formatCosignerVkey({ name, keyId: cosignerKeyIdSync(sha256, name, raw), publicKey: raw });
}

describe('a log witnessed by `wo witness` processes', () => {
  const witnesses: ChildWitness[] = [];
  let dir: string;
  let vkeys: string[];

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'wo-witnessed-'));
    witnesses.push(...(await Promise.all(['w1.test/witness', 'w2.test/witness', 'w3.test/witness'].map((name) => startWitness(name)))));
    vkeys = await Promise.all(witnesses.map((w) => w.vkey()));
  });
  after(async () => {
    await Promise.all(witnesses.map((w) => w.remove()));
    rmSync(dir, { recursive: true, force: true });
  });

  /** The service's policy: 2 of the 3 witnesses, with their URLs (the service submits to them). */
  function servicePolicy(file: string): string {
    writeFileSync(file, `${witnesses.map((w, i) => `witness W${i + 1} ${vkeys[i]} ${w.url}`).join('\n')}\ngroup two-of-three 2 W1 W2 W3\nquorum two-of-three\n`);
    return file;
  }
  /** The same witnesses as an auditor writes them (no URLs needed to verify). */
  function auditorPolicy(extra = ''): string {
    return `${vkeys.map((vkey, i) => `witness W${i + 1} ${vkey}`).join('\n')}\n${extra || 'group q 2 W1 W2 W3\nquorum q'}\n`;
  }

  let apps = 0;
  /** Each service its own origin: the witnesses keep one state per origin. */
  function appEnv(name: string): Record<string, string> {
    return { WO_WITNESS_POLICY: servicePolicy(path.join(dir, `policy-${name}.txt`)), WO_WITNESS_TIMEOUT_MS: '2000', WO_LOG_ORIGIN: `${name}-${++apps}.test/log` };
  }

  async function follow(t: TestApp): Promise<void> {
    const vkey = (await t.app.inject({ method: 'GET', url: '/api/v1/transparency/verifier-key' })).body.trim();
    const origin = vkey.split('+')[0]!;
    await Promise.all(witnesses.map((w) => w.cli(['add-log', '--origin', origin, '--vkey', vkey])));
  }

  async function witnessUntilPublished(t: TestApp, what: string): Promise<void> {
    await waitFor(async () => {
      await t.context.witnessing!.step();
      const sealed = await t.context.transparencyLog.latestSealed();
      const published = await t.context.transparencyLog.latestPublished();
      return sealed !== undefined && published !== undefined && published.treeSize === Number(sealed.tree_size);
    }, 30_000, what);
  }

  it('finds a checkpoint left unwitnessed by a process that stopped, and resumes each witness from the size it holds [sqlite]', async () => {
    const t = await startTestApp('sqlite', { env: appEnv('restart') });
    let reopened: { app: Awaited<ReturnType<typeof buildApp>>; context: AppContext } | undefined;
    try {
      await follow(t);
      const tenant = await t.newTenant();
      const categoryId = await seedCategory(tenant);
      await complete(tenant, categoryId);
      await t.context.proofs.log.sealPending();
      await witnessUntilPublished(t, 'a first witnessed checkpoint');
      const recordId = await complete(tenant, categoryId);
      await t.context.proofs.log.sealPending();
      // The process stops between the seal and the witnessing.
      await t.app.close();
      await t.context.close();

      const context = await createContext(t.config, { logger: pino({ level: 'silent' }) });
      reopened = { context, app: await buildApp(context) };
      await waitFor(async () => {
        await context.witnessing!.step();
        return (await context.transparencyLog.latestPublished())?.treeSize === 2;
      }, 30_000, 'the restarted process to publish the checkpoint');
      const proof = await reopened.app.inject({ method: 'GET', url: `/api/v1/records/${recordId}/proof`, headers: { authorization: `Bearer ${tenant.key}` } });
      assert.equal(proof.statusCode, 200, proof.body);
      // Each witness was sent the checkpoint from the size it was known to hold: no 409 to learn it again.
      context.jobs.start('worker');
      assert.doesNotMatch(await context.metrics.metrics(), /wo_witness_submissions_total\{witness="W\d",outcome="conflict"\} [1-9]/);
      await context.jobs.stopAll();
    } finally {
      await reopened?.app.close();
      await reopened?.context.close();
      rmSync(t.dataDir, { recursive: true, force: true });
    }
  });

  it('publishes a backlog checkpoint by checkpoint, each publication delivering a bounded number of statements [sqlite]', async () => {
    const t = await startTestApp('sqlite', { env: appEnv('backlog') });
    try {
      await follow(t);
      const tenant = await t.newTenant();
      const categoryId = await seedCategory(tenant);
      const sizes: number[] = [];
      for (let batch = 0; batch < 4; batch++) {
        for (let i = 0; i < 2; i++) await complete(tenant, categoryId);
        sizes.push((await t.context.proofs.log.sealPending())!.treeSize);
      }
      assert.deepEqual(sizes, [2, 4, 6, 8]);
      const policy = parseWitnessPolicySync(sha256, readFileSync(t.config.proofs.witnessPolicyFile!, 'utf8')) as SubmittingPolicy;
      const bounded = new CheckpointWitnessing(t.context.database.db, t.context.transparencyLog, policy, { timeoutMs: 2000, failOpen: false, idleMs: 50, maxPublishedAtOnce: 3 }, systemClock, pino({ level: 'silent' }), new Registry());
      const published: number[] = [];
      await waitFor(async () => {
        await bounded.step();
        const now = (await t.context.transparencyLog.latestPublished())?.treeSize;
        if (now !== undefined && published.at(-1) !== now) published.push(now);
        return now === 8;
      }, 30_000, 'the backlog to be published');
      // Each time the first checkpoint at least 3 statements past the last publication, not the latest.
      assert.deepEqual(published, [4, 8]);
      const events = await t.context.database.db.selectFrom('outbox_events').select(['payload']).where('type', '=', 'record.proof_delivered').execute();
      assert.deepEqual(events.map((event) => JSON.parse(event.payload).treeSize).sort(), [4, 4, 4, 4, 8, 8, 8, 8]);
    } finally {
      await t.close();
    }
  });

  for (const dialect of TEST_DIALECTS) {
    it(`delivers a proof only once a quorum of witnesses cosigned it, and \`wo proof verify --policy\` states the bound [${dialect}]`, async () => {
      const t = await startTestApp(dialect, { env: appEnv(`quorum-${dialect}`) });
      try {
        await follow(t);
        const tenant = await t.newTenant();
        const categoryId = await seedCategory(tenant);
        const recordId = await complete(tenant, categoryId);
        await t.context.proofs.log.sealPending();
        // Sealed, but not yet witnessed: still pending, and the public log does not show it yet.
        assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/records/${recordId}/proof` })).statusCode, 202);
        assert.equal((await t.app.inject({ method: 'GET', url: '/api/v1/transparency/checkpoint' })).statusCode, 404);

        await witnessUntilPublished(t, 'the checkpoint to be witnessed');
        const response = await tenant.request({ method: 'GET', url: `/api/v1/records/${recordId}/proof` });
        assert.equal(response.statusCode, 200, response.body);
        const bundle = response.json() as ProofBundle;
        const checkpoint = parseSignedCheckpoint(bundle.checkpoint);
        assert.ok(typeof checkpoint !== 'string');
        assert.ok(checkpoint.signatures.length >= 3, 'the log signature and at least two cosignatures');
        const served = await t.app.inject({ method: 'GET', url: '/api/v1/transparency/checkpoint' });
        assert.equal(served.body.split('\n\n')[0], bundle.checkpoint.split('\n\n')[0]);
        assert.equal(served.headers['x-wo-publication'], 'witnessed');

        const jwks = (await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json();
        const result = await verifyBundle(bundle, jwks, { policy: auditorPolicy() });
        assert.equal(result.valid, true, JSON.stringify(result));
        assert.ok(result.valid && result.witnessing && result.witnessing.cosigned.length >= 2 && result.witnessing.witnesses === 3);
        // Without a policy it verifies as before: the cosignatures are signatures by keys it does not know.
        assert.equal((await verifyBundle(bundle, jwks)).valid, true);
        // A stricter policy: all three and a fourth witness that does not exist.
        const strict = await verifyBundle(bundle, jwks, { policy: auditorPolicy(`witness W4 ${strangerVkey('w4.test/witness')}\ngroup all4 all W1 W2 W3 W4\nquorum all4`) });
        assert.equal(strict.valid, false);
        assert.equal(!strict.valid && strict.reason, 'quorum_not_met');

        // The CLI, as an auditor runs it.
        const bundleFile = path.join(dir, `bundle-${dialect}.json`);
        const jwksFile = path.join(dir, `jwks-${dialect}.json`);
        const policyFile = path.join(dir, `auditor-${dialect}.txt`);
        writeFileSync(bundleFile, JSON.stringify(bundle));
        writeFileSync(jwksFile, JSON.stringify(jwks));
        writeFileSync(policyFile, auditorPolicy());
        const verify = spawnWo(['proof', 'verify', bundleFile, '--keys', jwksFile, '--policy', policyFile], { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' });
        assert.equal(await verify.exited, 0, verify.stderr);
        assert.match(verify.stdout, /^valid: proof prf_\S+ of work order rec_\S+, leaf 0 of 1 in \S+; logged no later than \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z, attested by [23] of 3 witnesses\n/);
        const strictFile = path.join(dir, `strict-${dialect}.txt`);
        writeFileSync(strictFile, auditorPolicy(`witness W4 ${strangerVkey('w4.test/witness')}\ngroup all4 all W1 W2 W3 W4\nquorum all4`));
        const refused = spawnWo(['proof', 'verify', bundleFile, '--keys', jwksFile, '--policy', strictFile], { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' });
        assert.equal(await refused.exited, 1);
        assert.match(refused.stdout, /^invalid: quorum_not_met: /);

        // Witness health: in /readyz and /metrics.
        const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
        assert.equal(ready.statusCode, 200);
        assert.ok((ready.json().witnesses as Array<{ up: boolean }>).filter((w) => w.up).length >= 2);
        t.context.jobs.all(); // the witnessing job is registered
        assert.ok(t.context.jobs.all().some((job) => job.loop.name === 'checkpoint-witnessing'));
      } finally {
        await t.close();
      }
    });

    it(`keeps sealing while witnesses are down, and delivers once the quorum is back [${dialect}]`, async () => {
      const t = await startTestApp(dialect, { env: appEnv(`down-${dialect}`) });
      try {
        await follow(t);
        const tenant = await t.newTenant();
        const categoryId = await seedCategory(tenant);
        await witnesses[1]!.stop();
        await witnesses[2]!.stop();
        const first = await complete(tenant, categoryId);
        assert.equal((await t.context.proofs.log.sealPending())?.sealed, 1, 'sealed though two witnesses are down');
        await t.context.witnessing!.step();
        assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/records/${first}/proof` })).statusCode, 202, 'one cosignature is not the quorum');
        const second = await complete(tenant, categoryId);
        assert.equal((await t.context.proofs.log.sealPending())?.sealed, 1, 'still sealing');
        await t.context.witnessing!.step();
        const health = (await t.app.inject({ method: 'GET', url: '/readyz' })).json().witnesses as Array<{ name: string; up: boolean; lastError: string | null }>;
        assert.equal(health.find((w) => w.name === 'W2')?.up, false);
        assert.ok(health.find((w) => w.name === 'W2')?.lastError);

        await witnesses[1]!.start();
        await witnessUntilPublished(t, 'the quorum to be back');
        // Both statements are proven against the first witnessed checkpoint that holds them: the second.
        const jwks = (await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json();
        for (const recordId of [first, second]) {
          const response = await tenant.request({ method: 'GET', url: `/api/v1/records/${recordId}/proof` });
          assert.equal(response.statusCode, 200, response.body);
          assert.equal(response.json().treeSize, 2);
          assert.equal((await verifyBundle(response.json(), jwks, { policy: auditorPolicy() })).valid, true);
        }
        // Delivered once each, with the size of the checkpoint they are proven against.
        const events = await t.context.database.db.selectFrom('outbox_events').select(['type', 'payload']).where('type', '=', 'record.proof_delivered').execute();
        assert.equal(events.length, 2);
        for (const event of events) assert.equal(JSON.parse(event.payload).treeSize, 2);
        // Witness health in /metrics once the worker role runs: W3 is still down.
        t.context.jobs.start('worker');
        const metrics = await t.context.metrics.metrics();
        assert.match(metrics, /wo_witness_up\{witness="W3"\} 0/);
        assert.match(metrics, /wo_witness_up\{witness="W2"\} 1/);
        assert.match(metrics, /wo_witness_submissions_total\{witness="W1",outcome="cosigned"\} \d+/);
        await t.context.jobs.stopAll();
      } finally {
        await witnesses[2]!.start().catch(() => undefined);
        await t.close();
      }
    });

    it(`publishes flagged unwitnessed with WO_WITNESS_FAIL_OPEN, which a verifier with the policy refuses [${dialect}]`, async () => {
      const file = path.join(dir, `fail-open-${dialect}.txt`);
      // A second witness on a port where nothing listens, and a quorum of both.
      writeFileSync(file, `witness W1 ${vkeys[0]} ${witnesses[0]!.url}\nwitness Gone ${strangerVkey('gone.test/witness')} http://127.0.0.1:9\ngroup both all W1 Gone\nquorum both\n`);
      const t = await startTestApp(dialect, { env: { ...appEnv(`open-${dialect}`), WO_WITNESS_POLICY: file, WO_WITNESS_FAIL_OPEN: 'true' } });
      try {
        await follow(t);
        const tenant = await t.newTenant();
        const recordId = await complete(tenant, await seedCategory(tenant));
        await t.context.proofs.log.sealPending();
        await witnessUntilPublished(t, 'a fail-open publication');
        assert.equal((await t.context.transparencyLog.latestPublished())?.publication, 'unwitnessed');
        assert.equal((await t.app.inject({ method: 'GET', url: '/api/v1/transparency/checkpoint' })).headers['x-wo-publication'], 'unwitnessed');
        const response = await tenant.request({ method: 'GET', url: `/api/v1/records/${recordId}/proof` });
        assert.equal(response.statusCode, 200);
        const jwks = (await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json();
        assert.equal((await verifyBundle(response.json(), jwks)).valid, true);
        const policy = `witness W1 ${vkeys[0]}\nwitness Gone ${strangerVkey('gone.test/witness')}\ngroup both all W1 Gone\nquorum both\n`;
        const refused = await verifyBundle(response.json(), jwks, { policy });
        assert.equal(!refused.valid && refused.reason, 'quorum_not_met');
      } finally {
        await t.close();
      }
    });

    it(`never gets a second instance with the same log key and another history cosigned [${dialect}]`, async () => {
      const honest = await startTestApp(dialect, { env: appEnv(`split-${dialect}`) });
      const keysCopy = mkdtempSync(path.join(tmpdir(), 'wo-forked-keys-'));
      let fork: TestApp | undefined;
      try {
        await follow(honest);
        const tenant = await honest.newTenant();
        const categoryId = await seedCategory(tenant);
        for (let i = 0; i < 3; i++) await complete(tenant, categoryId);
        await honest.context.proofs.log.sealPending();
        await witnessUntilPublished(honest, 'the honest checkpoint');

        // The operator starts a copy of the service with the same log key, on another database.
        cpSync(honest.config.keysDir, keysCopy, { recursive: true });
        fork = await startTestApp(dialect, { env: { ...appEnv(`split-${dialect}`), WO_KEYS_DIR: keysCopy } });
        assert.equal(fork.context.transparencyLog.origin, honest.context.transparencyLog.origin);
        const forkTenant = await fork.newTenant();
        const forkCategory = await seedCategory(forkTenant);
        for (let i = 0; i < 5; i++) await complete(forkTenant, forkCategory);
        await fork.context.proofs.log.sealPending();
        for (let round = 0; round < 3; round++) await fork.context.witnessing!.step();
        assert.equal(await fork.context.transparencyLog.latestPublished(), undefined, 'the fork was never published');
        const forkHealth = (await fork.app.inject({ method: 'GET', url: '/readyz' })).json().witnesses as Array<{ up: boolean; lastError: string | null }>;
        assert.ok(forkHealth.every((w) => !w.up), JSON.stringify(forkHealth));
        assert.ok(forkHealth.some((w) => /422/.test(w.lastError ?? '')), JSON.stringify(forkHealth));

        // The witnesses' state did not move: the honest log goes on from where they were.
        await complete(tenant, categoryId);
        await honest.context.proofs.log.sealPending();
        await witnessUntilPublished(honest, 'the honest log to go on');
        assert.equal((await honest.context.transparencyLog.latestPublished())?.publication, 'witnessed');
      } finally {
        await fork?.close();
        await honest.close();
        rmSync(keysCopy, { recursive: true, force: true });
      }
    });
  }
});

