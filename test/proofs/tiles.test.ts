import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DIALECTS } from '../helpers/databases.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { insertStatement, listCheckpoints } from '../../src/proofs/repository.js';
import { consistencyProof, inclusionProof } from '../../src/proofs/merkle.js';
import { parseSignedCheckpoint } from '../../src/proofs/checkpoint.js';
import { sha256Sync } from '../../src/proofs/keys.js';
import { tilePath, tilesOfTree, tileSource, TILE_WIDTH } from '../../src/proofs/tiles.js';

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const SECRET = 'Flat 3, 12 Harbour Road, Ann Tenant: kitchen tap leaks';

for (const dialect of TEST_DIALECTS) {
  describe(`the log as C2SP tlog-tiles (${dialect})`, () => {
    let t: TestApp;
    const sizes: number[] = [];
    before(async () => {
      t = await startTestApp(dialect);
      const { db } = t.context.database;
      let n = 0;
      // Batches that cross tile boundaries (256) and leave partial tiles at levels 0 and 1.
      for (const batch of [1, 200, 55, 1, 300, 17]) {
        for (let i = 0; i < batch; i++) {
          const id = `prf_${String(n++).padStart(26, '0')}`;
          await insertStatement(db, {
            id, org_id: 'org_x', record_id: `rec_${n}`, jws: `${id} ${SECRET}`, statement_digest: '', statement_json: null, supersedes: null,
            status: 'pending', leaf_index: null, tree_size: null, created_at: new Date().toISOString(), sealed_at: null,
          });
        }
        sizes.push((await t.context.proofs.log.sealPending())!.treeSize);
      }
    });
    after(async () => t.close());

    async function tilesOf(size: number): Promise<Map<string, Uint8Array>> {
      const tiles = new Map<string, Uint8Array>();
      for (const tile of tilesOfTree(size)) {
        const response = await t.app.inject({ method: 'GET', url: `/api/v1/transparency/${tilePath(tile)}` });
        assert.equal(response.statusCode, 200, `${tilePath(tile)}: ${response.body}`);
        assert.equal(response.headers['content-type'], 'application/octet-stream');
        assert.equal(response.headers['cache-control'], 'public, max-age=31536000, immutable');
        assert.equal(response.rawPayload.length, tile.width * 32);
        tiles.set(tilePath(tile), new Uint8Array(response.rawPayload));
      }
      return tiles;
    }

    it('serves the partial tiles of every published size, and from tiles alone rebuilds the API’s inclusion and consistency proofs byte for byte', async () => {
      assert.deepEqual((await listCheckpoints(t.context.database.db)).map((row) => Number(row.tree_size)), sizes);
      let seed = 7;
      const random = (n: number) => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return seed % n;
      };
      for (const size of sizes) {
        const source = tileSource(sha256Sync, await tilesOf(size));
        const checkpoint = await t.app.inject({ method: 'GET', url: `/api/v1/transparency/checkpoint?treeSize=${size}` });
        const parsed = parseSignedCheckpoint(checkpoint.body);
        assert.ok(typeof parsed !== 'string');
        for (let k = 0; k < 5; k++) {
          const leafIndex = random(size);
          const api = await t.app.inject({ method: 'GET', url: `/api/v1/transparency/inclusion?leafIndex=${leafIndex}&treeSize=${size}` });
          assert.deepEqual(inclusionProof(sha256Sync, source, leafIndex, size).map(b64), api.json().inclusionProof, `inclusion of ${leafIndex} in ${size}`);
          const first = 1 + random(size);
          const consistency = await t.app.inject({ method: 'GET', url: `/api/v1/transparency/consistency?first=${first}&second=${size}` });
          assert.deepEqual(consistencyProof(sha256Sync, source, first, size).map(b64), consistency.json().consistencyProof, `consistency ${first} → ${size}`);
        }
      }
    });

    it('answers 404 for a tile the published tree does not hold, a path not in the spec’s encoding, and entry bundles', async () => {
      const latest = sizes.at(-1)!;
      const full = Math.floor(latest / TILE_WIDTH);
      for (const url of [
        `tile/0/${String(full).padStart(3, '0')}`, // the tile after the last full one is only partial yet
        `tile/0/${String(full).padStart(3, '0')}.p/${(latest % TILE_WIDTH) + 1}`,
        'tile/2/000.p/1',
        'tile/0/0',
        'tile/0/x000/000',
        'tile/entries/000',
        'tile/entries/000.p/1',
      ]) {
        const response = await t.app.inject({ method: 'GET', url: `/api/v1/transparency/${url}` });
        assert.equal(response.statusCode, 404, `${url}: ${response.statusCode}`);
        assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
      }
    });

    it('publishes no statement text in any tile or checkpoint', async () => {
      const tiles = await tilesOf(sizes.at(-1)!);
      for (const bytes of tiles.values()) assert.ok(!Buffer.from(bytes).includes('Harbour'), 'a tile holds statement text');
      for (const size of sizes) {
        const checkpoint = await t.app.inject({ method: 'GET', url: `/api/v1/transparency/checkpoint?treeSize=${size}` });
        assert.ok(!checkpoint.body.includes('Harbour'));
        // The body is the three lines of tlog-checkpoint and nothing else.
        assert.equal(checkpoint.body.split('\n\n')[0]!.split('\n').length, 3);
      }
    });
  });
}
