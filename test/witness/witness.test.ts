import assert from 'node:assert/strict';
import { generateKeyPairSync, sign, verify, createPublicKey, type KeyObject } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { formatCheckpointBody, formatSignedNote, formatVerifierKey, parseSignedCheckpoint } from '../../src/proofs/checkpoint.js';
import { cosignatureMessage, parseCosignerVkey, readTimestampedSignature, isByCosigner } from '../../src/proofs/cosignature.js';
import { toBase64, toBase64Url } from '../../src/proofs/encoding.js';
import { sha256Sync } from '../../src/proofs/keys.js';
import { consistencyProof, leafArraySource, leafHash, rootHash } from '../../src/proofs/merkle.js';
import { addCheckpoint, startWitness, type ChildWitness } from '../helpers/witnesses.js';

/** A log kept in memory: its key, its leaves, and the checkpoints and proofs a sequencer would send. */
class TestLog {
  readonly leaves: Uint8Array[] = [];
  private readonly privateKey: KeyObject;
  readonly publicKey: Uint8Array;

  constructor(
    readonly origin: string,
    key?: { privateKey: KeyObject; publicKey: Uint8Array },
  ) {
    const pair = key ?? (() => {
      const { privateKey, publicKey } = generateKeyPairSync('ed25519');
      return { privateKey, publicKey: new Uint8Array(publicKey.export({ format: 'der', type: 'spki' }).subarray(-32)) };
    })();
    this.privateKey = pair.privateKey;
    this.publicKey = pair.publicKey;
  }

  /** Another log under the same key and origin: a second instance of the service with another history. */
  fork(sharedLeaves: number): TestLog {
    const fork = new TestLog(this.origin, { privateKey: this.privateKey, publicKey: this.publicKey });
    fork.leaves.push(...this.leaves.slice(0, sharedLeaves));
    return fork;
  }

  append(count: number, tag = 'honest'): void {
    for (let i = 0; i < count; i++) this.leaves.push(leafHash(sha256Sync, new TextEncoder().encode(`${tag} ${this.leaves.length}`)));
  }

  get vkey(): string {
    return formatVerifierKey(this.origin, sha256Sync(new Uint8Array([...new TextEncoder().encode(this.origin), 0x0a, 0x01, ...this.publicKey])).slice(0, 4), this.publicKey);
  }

  checkpoint(size = this.leaves.length): string {
    const body = formatCheckpointBody({ origin: this.origin, treeSize: size, rootHash: rootHash(sha256Sync, leafArraySource(sha256Sync, this.leaves), size) });
    const keyId = sha256Sync(new Uint8Array([...new TextEncoder().encode(this.origin), 0x0a, 0x01, ...this.publicKey])).slice(0, 4);
    return formatSignedNote(body, [{ name: this.origin, keyId, signature: sign(null, Buffer.from(body), this.privateKey) }]);
  }

  /** The add-checkpoint body from `oldSize` to `size`. */
  request(oldSize: number, size = this.leaves.length): string {
    const proof = oldSize === 0 || oldSize === size ? [] : consistencyProof(sha256Sync, leafArraySource(sha256Sync, this.leaves), oldSize, size);
    return `old ${oldSize}\n${proof.map((hash) => `${toBase64(hash)}\n`).join('')}\n${this.checkpoint(size)}`;
  }
}

/** The size the witness holds for a log, asked the way a log asks: `old 0` answers 409 with it (or cosigns a first checkpoint). */
async function heldSize(witness: ChildWitness, log: TestLog): Promise<number> {
  const real = await addCheckpoint(witness.url, `old 0\n\n${log.checkpoint(0)}`);
  if (real.status === 409) return Number(real.body.trim());
  throw new Error(`expected a 409 from a witness that cosigned before, got ${real.status} ${real.body}`);
}

describe('wo witness (C2SP tlog-witness, child processes)', () => {
  let witness: ChildWitness;
  const log = new TestLog('wo.example.com/work-orders/log');

  before(async () => {
    witness = await startWitness('witness.test/one');
    assert.match(await witness.cli(['add-log', '--origin', log.origin, '--vkey', log.vkey]), /^following wo\.example\.com\/work-orders\/log$/);
  });
  after(async () => witness.remove());

  it('prints its cosignature/v1 vkey, whose key id is the one of its cosignature lines', async () => {
    const vkey = await witness.vkey();
    assert.match(vkey, /^witness\.test\/one\+[0-9a-f]{8}\+B/);
    const key = await parseCosignerVkey(async (d) => sha256Sync(d), vkey);
    assert.ok(typeof key !== 'string', String(key));
  });

  it('cosigns a first checkpoint, then only one that extends it, with a timestamped cosignature over the cosignature/v1 message', async () => {
    log.append(10);
    const first = await addCheckpoint(witness.url, log.request(0));
    assert.equal(first.status, 200, first.body);
    assert.match(first.body, /^— witness\.test\/one [A-Za-z0-9+/]+=*\n$/);
    const key = await parseCosignerVkey(async (d) => sha256Sync(d), await witness.vkey());
    assert.ok(typeof key !== 'string');
    const cosigned = parseSignedCheckpoint(`${log.checkpoint()}${first.body}`);
    assert.ok(typeof cosigned !== 'string', String(cosigned));
    const line = cosigned.signatures.find((s) => isByCosigner(s, key))!;
    const { timestamp, signature } = readTimestampedSignature(line.signature)!;
    assert.ok(Math.abs(timestamp - Date.now() / 1000) < 60);
    const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: toBase64Url(key.publicKey) }, format: 'jwk' });
    assert.ok(verify(null, cosignatureMessage(cosigned.body, timestamp), publicKey, signature));

    log.append(7);
    const next = await addCheckpoint(witness.url, log.request(10));
    assert.equal(next.status, 200, next.body);
    // The same checkpoint again (a log that lost the answer) is cosigned again: same size, same root, empty proof.
    assert.equal((await addCheckpoint(witness.url, log.request(17))).status, 200);
  });

  it('answers every status code of tlog-witness, and its state is unchanged after each refusal', async () => {
    const size = log.leaves.length;
    const stranger = new TestLog('other.example/log');
    const fresh = new TestLog('fresh.example/log');
    fresh.append(3);
    await witness.cli(['add-log', '--origin', fresh.origin, '--vkey', fresh.vkey]);
    const freshProof = await addCheckpoint(witness.url, `old 0\n${toBase64(fresh.leaves[0]!)}\n\n${fresh.checkpoint()}`);
    assert.equal(freshProof.status, 422, freshProof.body);
    const otherKey = new TestLog(log.origin);
    otherKey.leaves.push(...log.leaves);
    const cases: Array<[string, string, number, RegExp?]> = [
      ['no old line', `${log.checkpoint()}`, 400],
      ['an old size with a leading zero', `old 017\n\n${log.checkpoint()}`, 400],
      ['a proof line that is not a hash', `old ${size}\nnot-base64\n\n${log.checkpoint()}`, 400],
      ['a checkpoint that is not a signed note', `old ${size}\n\nwo.example.com/work-orders/log\n${size}\n`, 400],
      ['an old size above the checkpoint size', `old ${size + 5}\n\n${log.checkpoint()}`, 400],
      ['a control character in the note', `old ${size}\n\n${log.checkpoint().replace('\n', '\r\n')}`, 400],
      ['a log it does not follow', '', 404],
      ['another key under the log’s name', otherKey.request(size), 403],
      ['a signature by the log’s key that does not verify', log.request(size).replace(/\n— (\S+) (\S{10})/, (_m, name: string, sig: string) => `\n— ${name} ${sig.slice(0, 9)}${sig[9] === 'A' ? 'B' : 'A'}`), 403],
      ['an old size that is not the one it cosigned', log.request(10), 409],
      ['a proof from size 0', `old 0\n${toBase64(log.leaves[0]!)}\n\n${log.checkpoint()}`, 409],
      ['a proof between equal sizes', `old ${size}\n${toBase64(log.leaves[0]!)}\n\n${log.checkpoint()}`, 422],
    ];
    stranger.append(1);
    cases[cases.findIndex(([what]) => what === 'a log it does not follow')] = ['a log it does not follow', stranger.request(0), 404];
    for (const [what, body, status] of cases) {
      const response = await addCheckpoint(witness.url, body);
      assert.equal(response.status, status, `${what}: ${response.status} ${response.body}`);
      if (status === 409) {
        assert.equal(response.contentType, 'text/x.tlog.size');
        assert.equal(response.body, `${size}\n`);
      }
    }
    // A wrong consistency proof: the right sizes, a hash flipped.
    log.append(3);
    const tampered = log.request(size).replace(/^old (\d+)\n([A-Za-z0-9+/]{5})/, (_m, old: string, head: string) => `old ${old}\n${head.slice(0, 4)}${head[4] === 'A' ? 'B' : 'A'}`);
    assert.equal((await addCheckpoint(witness.url, tampered)).status, 422);
    // Not POST, another path, a body too large.
    assert.equal((await fetch(`${witness.url}/add-checkpoint`)).status, 405);
    assert.equal((await fetch(`${witness.url}/other`, { method: 'POST', body: 'x' })).status, 404);
    assert.equal((await fetch(`${witness.url}/add-checkpoint`, { method: 'POST', body: 'x'.repeat(20_000) }).catch(() => ({ status: 413 }))).status, 413);
    assert.equal(await heldSize(witness, log), size);
    assert.equal((await addCheckpoint(witness.url, log.request(size))).status, 200);
  });

  it('gives exactly one 200 to two concurrent requests from the same old size', async () => {
    const from = log.leaves.length;
    log.append(4);
    const a = log.request(from);
    const aSize = log.leaves.length;
    log.append(4);
    const b = log.request(from);
    const answers = await Promise.all([addCheckpoint(witness.url, a), addCheckpoint(witness.url, b)]);
    const statuses = answers.map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, 409], JSON.stringify(answers));
    const winner = answers.findIndex((r) => r.status === 200);
    const held = await heldSize(witness, log);
    assert.equal(held, winner === 0 ? aSize : log.leaves.length);
    // Whoever lost resends from the size the 409 named, as the service does.
    const loser = answers[1 - winner]!;
    assert.equal(Number(loser.body.trim()), held);
    if (held !== log.leaves.length) assert.equal((await addCheckpoint(witness.url, log.request(held))).status, 200);
    // Many at once, all from the same old size: still exactly one.
    const base = log.leaves.length;
    const bodies: string[] = [];
    for (let i = 0; i < 6; i++) {
      log.append(1);
      bodies.push(log.request(base));
    }
    const many = await Promise.all(bodies.map((body) => addCheckpoint(witness.url, body)));
    assert.equal(many.filter((r) => r.status === 200).length, 1, JSON.stringify(many.map((r) => r.status)));
    const size = await heldSize(witness, log);
    if (size !== log.leaves.length) assert.equal((await addCheckpoint(witness.url, log.request(size))).status, 200);
  });

  it('refuses a split view: another history under the same key, at the same size, a larger one, or one consistent only up to an earlier size', async () => {
    const size = log.leaves.length;
    // A second instance of the service with the same log key: it shares the first 5 leaves and then diverges.
    const fork = log.fork(5);
    fork.append(size - 5, 'forked');
    const sameSize = await addCheckpoint(witness.url, fork.request(size));
    assert.equal(sameSize.status, 422, sameSize.body);
    assert.match(sameSize.body, /split view/);
    fork.append(6, 'forked');
    // Its own consistency proof from `size`: of its own tree, so it does not lead from the honest root.
    assert.equal((await addCheckpoint(witness.url, fork.request(size))).status, 422);
    // It can prove consistency with the honest log from 5, where they agree, but the witness is past that.
    const fromFive = fork.request(5);
    assert.equal((await addCheckpoint(witness.url, fromFive)).status, 409);
    assert.equal(await heldSize(witness, log), size);
    // The honest log still goes on.
    log.append(2);
    assert.equal((await addCheckpoint(witness.url, log.request(size))).status, 200);
  });

  it('keeps its key and state across a restart of its process', async () => {
    const vkey = await witness.vkey();
    const size = log.leaves.length;
    await witness.restart();
    assert.equal(await witness.vkey(), vkey);
    assert.equal(await heldSize(witness, log), size);
    log.append(1);
    assert.equal((await addCheckpoint(witness.url, log.request(size))).status, 200);
  });

  it('refuses to start under another name than its key was made with', async () => {
    const run = await witness.cli(['vkey']).then(
      () => 'started',
      (error: Error) => error.message,
    );
    assert.equal(run, 'started');
    const { spawnWo } = await import('../helpers/child-processes.js');
    const renamed = spawnWo(['witness', 'vkey'], { PATH: process.env.PATH ?? '', WO_WITNESS_DATA_DIR: witness.dataDir, WO_WITNESS_NAME: 'witness.test/renamed' });
    assert.equal(await renamed.exited, 2);
    assert.match(renamed.stderr, /was made as "witness\.test\/one"/);
  });
});

