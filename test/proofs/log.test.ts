import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { TEST_DIALECTS } from '../helpers/databases.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { insertStatement, listCheckpoints } from '../../src/proofs/repository.js';
import { consistencyProof, inclusionProof, leafArraySource, leafHash, rootHash } from '../../src/proofs/merkle.js';
import { parseSignedCheckpoint } from '../../src/proofs/checkpoint.js';
import { sha256Sync } from '../../src/proofs/keys.js';

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

for (const dialect of TEST_DIALECTS) {
  describe(`the stored transparency log (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(dialect);
    });
    after(async () => t.close());

    it('matches an in-memory tree after appends in batches of varying sizes, for every root and proof', async () => {
      const { db } = t.context.database;
      const leaves: string[] = [];
      let n = 0;
      // Batch sizes chosen to cross many power-of-two boundaries of the frontier.
      for (const batch of [1, 1, 2, 3, 1, 8, 5, 16, 1, 7, 30, 2]) {
        for (let i = 0; i < batch; i++) {
          const id = `prf_${String(n++).padStart(26, '0')}`;
          const jws = `leaf-data-${id}`;
          leaves.push(jws);
          await insertStatement(db, {
            id, org_id: 'org_x', record_id: `rec_${n}`, jws, statement_digest: '', statement_json: null, supersedes: null,
            status: 'pending', leaf_index: null, tree_size: null, created_at: new Date().toISOString(), sealed_at: null,
          });
        }
        const sealed = await t.context.proofs.log.sealPending();
        assert.deepEqual(sealed, { treeSize: leaves.length, sealed: batch });
      }
      assert.equal(await t.context.proofs.log.sealPending(), undefined, 'nothing left to seal');
      // An empty tick is a read: on SQLite it opens no write group (no commit for reads to wait on).
      const commitsBefore = t.context.database.groupCommit?.commits;
      assert.equal(await t.context.proofs.log.sealPending(), undefined);
      assert.equal(t.context.database.groupCommit?.commits, commitsBefore, 'an empty tick committed nothing');

      const source = leafArraySource(sha256Sync, leaves.map((l) => leafHash(sha256Sync, new TextEncoder().encode(l))));
      const checkpoints = await listCheckpoints(db);
      for (const row of checkpoints) {
        const parsed = parseSignedCheckpoint(row.note);
        assert.ok(typeof parsed !== 'string');
        assert.equal(b64(parsed.rootHash), b64(rootHash(sha256Sync, source, Number(row.tree_size))), `root at ${row.tree_size}`);
      }
      const size = leaves.length;
      for (let index = 0; index < size; index++) {
        assert.deepEqual(await t.context.proofs.log.inclusionProof(index, size), inclusionProof(sha256Sync, source, index, size).map(b64), `inclusion ${index}`);
      }
      for (let first = 1; first <= size; first += 3) {
        assert.deepEqual(await t.context.proofs.log.consistencyProof(first, size), consistencyProof(sha256Sync, source, first, size).map(b64), `consistency ${first}`);
      }
    });

    if (dialect === 'postgres') {
      it('lets only one sequencer append: another holder of the advisory lock makes it stand aside', async () => {
        const { db } = t.context.database;
        await insertStatement(db, {
          id: 'prf_zzzzzzzzzzzzzzzzzzzzzzzzzz', org_id: 'org_x', record_id: 'rec_lock', jws: 'lock-test', statement_digest: '', statement_json: null, supersedes: null,
          status: 'pending', leaf_index: null, tree_size: null, created_at: new Date().toISOString(), sealed_at: null,
        });
        await db.transaction().execute(async (other) => {
          await sql`SELECT pg_advisory_xact_lock(${0x776f_7066}::integer, hashtext(current_schema()))`.execute(other);
          assert.equal(await t.context.proofs.log.sealPending(), undefined);
        });
        assert.equal((await t.context.proofs.log.sealPending())?.sealed, 1);
      });
    }
  });
}
