import assert from 'node:assert/strict';
import { createHash, createPublicKey, verify } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TEST_DIALECTS } from '../helpers/databases.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { canonicalJson } from '../../src/canonical-json.js';
import { findServedProof, insertStatement } from '../../src/proofs/repository.js';
import { ProofKeys } from '../../src/proofs/keys.js';
import { SIGNING_THREAD_NICE, StatementSigner } from '../../src/proofs/statement-signer.js';
import { systemClock } from '../../src/clock.js';
import type { Jwks } from '../../src/proofs/verify.js';

function statement(n: number): Record<string, unknown> {
  // Key order and spacing differ from RFC 8785 on purpose: the signer must canonicalize.
  return { v: 1, type: 'wo.completion', record: { version: n, id: `rec_${n}` }, history: [{ at: '2026-11-25T10:00:00.000Z', data: { note: 'café ✓', amount: 12.5 } }] };
}

async function storeUnsigned(t: TestApp, id: string, value: Record<string, unknown>): Promise<void> {
  await insertStatement(t.context.database.db, {
    id,
    org_id: 'org_sign',
    record_id: `rec_${id}`,
    jws: '',
    statement_digest: '',
    statement_json: JSON.stringify(value),
    supersedes: null,
    status: 'unsigned',
    leaf_index: null,
    tree_size: null,
    created_at: new Date().toISOString(),
    sealed_at: null,
  });
}

/** Nice values of this process's threads (field 19 of /proc/self/task/<tid>/stat), or of one thread. */
function threadNiceValues(tid?: number): number[] {
  const tids = tid === undefined ? readdirSync('/proc/self/task') : [String(tid)];
  return tids.map((id) => {
    const stat = readFileSync(`/proc/self/task/${id}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

/** Checks `jws` against the published statement key and answers its payload text. */
function verifiedPayload(jws: string, jwks: Jwks): string {
  const [header, payload, signature] = jws.split('.') as [string, string, string];
  const { kid } = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as { kid: string };
  const jwk = jwks.keys.find((key) => key.kid === kid);
  assert.ok(jwk, `kid ${kid} is published`);
  const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x } as never, format: 'jwk' });
  assert.ok(verify(null, Buffer.from(`${header}.${payload}`, 'ascii'), key, Buffer.from(signature, 'base64url')), 'signature verifies');
  return Buffer.from(payload, 'base64url').toString('utf8');
}

for (const dialect of TEST_DIALECTS) {
  describe(`signing completion statements (${dialect})`, () => {
    let t: TestApp;
    let jwks: Jwks;
    before(async () => {
      t = await startTestApp(dialect);
      jwks = (await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json();
    });
    after(async () => t.close());

    it('signs what completions stored unsigned, on the signing thread, when it seals them', async () => {
      const ids = ['prf_sign0000000000000000000001', 'prf_sign0000000000000000000002', 'prf_sign0000000000000000000003'];
      for (const [i, id] of ids.entries()) await storeUnsigned(t, id, statement(i));
      const sealed = await t.context.transparencyLog.sealPending();
      assert.equal(sealed?.sealed, 3);
      assert.equal(t.context.transparencyLog.signer.threaded, true, 'the thread signed them, not the fallback');
      for (const [i, id] of ids.entries()) {
        const row = await t.context.database.db.selectFrom('proof_statements').selectAll().where('id', '=', id).where('org_id', '=', 'org_sign').executeTakeFirst();
        assert.equal(row?.status, 'sealed');
        assert.equal(row?.statement_json, null, 'the JSON copy is dropped once signed');
        const payload = verifiedPayload(row!.jws, jwks);
        assert.equal(payload, canonicalJson(statement(i)), 'the payload is the RFC 8785 form of what was stored');
        assert.equal(row?.statement_digest, createHash('sha256').update(payload, 'utf8').digest('hex'));
      }
    });

    if (dialect === 'sqlite') {
      it('signs ahead of the seal, and still seals a statement stored behind the point it had reached', async () => {
        await storeUnsigned(t, 'prf_sign9999999999999999999999', statement(9));
        await t.context.transparencyLog.signAhead();
        // Stored after signing ahead, with a smaller id (as another process could): not signed yet.
        await storeUnsigned(t, 'prf_sign5555555555555555555555', statement(5));
        assert.equal((await t.context.transparencyLog.sealPending())?.sealed, 2, 'the seal signs what was not signed ahead');
        for (const [id, n] of [['prf_sign9999999999999999999999', 9], ['prf_sign5555555555555555555555', 5]] as const) {
          const row = (await findServedProof(t.context.database.db, 'org_sign', id, false))?.statement;
          assert.equal(row?.status, 'sealed', id);
          assert.equal(verifiedPayload(row!.jws, jwks), canonicalJson(statement(n)));
        }
      });
    }
  });
}

describe('the statement signer', () => {
  it('signs on the event loop, with the same result, when its thread cannot start', async () => {
    const keysDir = mkdtempSync(path.join(tmpdir(), 'wo-signer-keys-'));
    const key = ProofKeys.loadOrCreate(keysDir, 'test.example/log', systemClock).statementSigningKey;
    const threaded = new StatementSigner(() => key);
    const broken = new StatementSigner(() => key, { threadModule: './no-such-thread-module' });
    try {
      const statements = [{ id: 'a', statementJson: JSON.stringify(statement(1)) }, { id: 'b', statementJson: '{"not json' }];
      const inline = await broken.sign(statements);
      assert.equal(broken.threaded, false, 'it noticed the thread failed');
      const onThread = await threaded.sign(statements);
      assert.equal(threaded.threaded, true);
      assert.ok(inline.get('a')?.jws, 'signed inline');
      assert.deepEqual(inline.get('a'), onThread.get('a'), 'Ed25519 signatures are deterministic: the same bytes either way');
      assert.equal(inline.has('b'), false, 'a statement that cannot be signed is left out, not thrown');
      assert.equal(onThread.has('b'), false);
      if (process.platform === 'linux') {
        // Linux keeps a nice value per thread: the signing thread yields to the event loop, which keeps its own.
        assert.deepEqual(threadNiceValues().filter((nice) => nice === SIGNING_THREAD_NICE).length, 1, 'one thread runs at the signing nice value');
        assert.equal(threadNiceValues(process.pid)[0], 0, 'the event loop keeps normal priority');
      }
    } finally {
      await Promise.all([threaded.stop(), broken.stop()]);
      rmSync(keysDir, { recursive: true, force: true });
    }
  });
});
