import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { compactVerify, createLocalJWKSet } from 'jose';
import { systemClock } from '../clock.js';
import { formatCheckpointBody } from './checkpoint.js';
import { canonicalBytes, canonicalJson } from '../canonical-json.js';
import { ProofKeys, readPublishedKeys, rotateStatementKey, sha256Sync } from './keys.js';
import { inclusionProof, leafArraySource, leafHash, rootHash } from './merkle.js';
import { buildCompletionStatement } from './statement.js';
import { BUNDLE_MEDIA_TYPE, verifyBundle, type Jwks, type ProofBundle } from './verify.js';
import type { WorkOrder } from '../records/schemas.js';

const ORIGIN = 'proofs.example.test/log';
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

function completedRecord(id: string): WorkOrder {
  return {
    id,
    recordId: id,
    status: 'COMPLETED',
    categoryId: 'cat_01',
    address: '12 Harbour Road — Unit 4 ✓',
    requesterName: 'Ann Tenant',
    description: 'Kitchen tap leaks',
    priority: 'MEDIUM',
    dueAt: null,
    assignee: 'Bob Plumber',
    assignees: [],
    costs: null,
    laborMinutes: 0,
    assetId: null,
    locationId: null,
    externalRef: null,
    metadata: { erp: 42, tags: ['a', 'b'] },
    customFields: {},
    checklists: [],
    source: null,
    requestId: null,
    resolutionNotes: 'Replaced the washer',
    completedAt: '2026-01-02T03:04:05.678Z',
    closedAt: null,
    cancelledAt: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-02T03:04:05.678Z',
    version: 4,
  };
}

/** A statement as version 1 signed it, before checklists and custom fields: what proofs of then carry. */
function asVersion1(statement: ReturnType<typeof buildCompletionStatement>): object {
  const { checklists: _checklists, ...rest } = statement;
  const { customFields: _customFields, checklists: _given, ...record } = rest.record as typeof rest.record & { customFields?: unknown; checklists?: unknown };
  return { ...rest, v: 1, record };
}

/** A real bundle built without a database: five statements in an in-memory tree, one checkpoint. */
function makeBundle(keys: ProofKeys, leafPosition = 3, reshape: (statement: ReturnType<typeof buildCompletionStatement>) => object = (s) => s): ProofBundle {
  const jwsList = Array.from({ length: 5 }, (_, i) => {
    const statement = buildCompletionStatement({
      proofId: `prf_${i}`,
      orgId: 'org_1',
      record: completedRecord(`rec_${i}`),
      history: [{ id: 'rev_1', recordId: `rec_${i}`, action: 'complete', fromStatus: 'IN_PROGRESS', toStatus: 'COMPLETED', actor: { type: 'api_key', id: 'key_1' }, data: {}, occurredAt: '2026-01-02T03:04:05.678Z' }],
      evidence: [{ name: 'photo.jpg', sha256: 'a'.repeat(64) }],
      supersedes: null,
      checklists: [],
    });
    return keys.signJws(canonicalBytes(reshape(statement)));
  });
  const source = leafArraySource(sha256Sync, jwsList.map((j) => leafHash(sha256Sync, new TextEncoder().encode(j))));
  const root = rootHash(sha256Sync, source, 5);
  return {
    version: 1,
    mediaType: BUNDLE_MEDIA_TYPE,
    proofId: `prf_${leafPosition}`,
    recordId: `rec_${leafPosition}`,
    jws: jwsList[leafPosition]!,
    leafIndex: leafPosition,
    treeSize: 5,
    inclusionProof: inclusionProof(sha256Sync, source, leafPosition, 5).map((h) => Buffer.from(h).toString('base64')),
    checkpoint: keys.signCheckpoint(formatCheckpointBody({ origin: ORIGIN, treeSize: 5, rootHash: root })),
    keys: { statementKid: keys.currentKid, logKeyName: keys.log.name, logKeyId: Buffer.from(keys.log.keyId).toString('hex') },
  };
}

function replaceChar(text: string, index: number, alphabet: string): string {
  const current = text[index]!;
  const replacement = alphabet[(alphabet.indexOf(current) + 1) % alphabet.length] ?? alphabet[0]!;
  return text.slice(0, index) + (replacement === current ? alphabet[1]! : replacement) + text.slice(index + 1);
}

describe('proof verification', () => {
  let keysDir: string;
  let keys: ProofKeys;
  let jwks: Jwks;
  let bundle: ProofBundle;

  before(() => {
    keysDir = mkdtempSync(path.join(tmpdir(), 'wo-keys-'));
    keys = ProofKeys.loadOrCreate(keysDir, ORIGIN, systemClock);
    jwks = keys.jwks();
    bundle = makeBundle(keys);
  });
  after(() => rmSync(keysDir, { recursive: true, force: true }));

  it('accepts an untouched bundle with the published keys', async () => {
    const result = await verifyBundle(bundle, jwks);
    assert.equal(result.valid, true, JSON.stringify(result));
    if (result.valid) {
      assert.equal(result.statement.record.id, 'rec_3');
      assert.equal(result.logOrigin, ORIGIN);
    }
  });

  it('keeps verifying a version 1 statement, signed before checklists, and refuses a version it does not know', async () => {
    const old = await verifyBundle(makeBundle(keys, 2, asVersion1), jwks);
    assert.equal(old.valid, true, JSON.stringify(old));
    if (old.valid) assert.deepEqual([old.statement.v, old.statement.checklists, old.statement.evidence.length], [1, undefined, 1]);
    const current = await verifyBundle(bundle, jwks);
    assert.ok(current.valid && current.statement.v === 2 && Array.isArray(current.statement.checklists));
    const future = await verifyBundle(makeBundle(keys, 2, (s) => ({ ...s, v: 3 })), jwks);
    assert.equal(future.valid ? 'valid' : future.reason, 'unsupported_statement');
  });

  it('lets a generic JOSE library verify the statement JWS from the JWKS alone', async () => {
    const { payload, protectedHeader } = await compactVerify(bundle.jws, createLocalJWKSet(jwks as never));
    assert.equal(protectedHeader.alg, 'EdDSA');
    assert.equal(protectedHeader.kid, keys.currentKid);
    const statement = JSON.parse(new TextDecoder().decode(payload)) as { proofId: string; type: string };
    assert.equal(statement.proofId, 'prf_3');
    assert.equal(statement.type, 'wo.completion');
    assert.equal(new TextDecoder().decode(payload), canonicalJson(statement));
  });

  it('fails with bad_signature when any character of the signed statement changes', async () => {
    const [header, payload, signature] = bundle.jws.split('.') as [string, string, string];
    for (let i = 0; i < payload.length; i++) {
      const jws = `${header}.${replaceChar(payload, i, B64URL)}.${signature}`;
      const result = await verifyBundle({ ...bundle, jws }, jwks);
      // The last character may carry unused bits: changing those gives a non-canonical encoding.
      const expected = i === payload.length - 1 ? ['bad_signature', 'jws_malformed'] : ['bad_signature'];
      assert.ok(expected.includes(result.valid ? 'valid' : result.reason), `payload char ${i}: ${JSON.stringify(result)}`);
    }
  });

  it('fails with bad_signature when the signature changes, and unknown_key when the signer is not trusted', async () => {
    const [header, payload, signature] = bundle.jws.split('.') as [string, string, string];
    const tampered = await verifyBundle({ ...bundle, jws: `${header}.${payload}.${replaceChar(signature, 10, B64URL)}` }, jwks);
    assert.equal(tampered.valid ? 'valid' : tampered.reason, 'bad_signature');
    const withoutStatementKeys = { keys: jwks.keys.filter((k) => k['x-wo-role'] !== 'statement') };
    const unknown = await verifyBundle(bundle, withoutStatementKeys);
    assert.equal(unknown.valid ? 'valid' : unknown.reason, 'unknown_key');
  });

  it('fails with statement_not_canonical when a correctly signed payload is not RFC 8785 bytes', async () => {
    const statement = JSON.parse(new TextDecoder().decode(Buffer.from(bundle.jws.split('.')[1]!, 'base64url'))) as unknown;
    const pretty = keys.signJws(new TextEncoder().encode(JSON.stringify(statement, null, 2)));
    const result = await verifyBundle({ ...bundle, jws: pretty }, jwks);
    assert.equal(result.valid ? 'valid' : result.reason, 'statement_not_canonical');
    const duplicateKeys = keys.signJws(new TextEncoder().encode(canonicalJson(statement).replace('{"assignee"', '{"assignee":"x","assignee"')));
    const duplicate = await verifyBundle({ ...bundle, jws: duplicateKeys }, jwks);
    assert.equal(duplicate.valid ? 'valid' : duplicate.reason, 'statement_not_canonical');
  });

  it('fails with leaf_not_in_tree when any inclusion-proof hash or the leaf index changes', async () => {
    for (let i = 0; i < bundle.inclusionProof.length; i++) {
      const hash = Buffer.from(bundle.inclusionProof[i]!, 'base64');
      for (const byte of [0, 17, 31]) {
        const bad = Buffer.from(hash);
        bad[byte]! ^= 0x01;
        const inclusionProof = bundle.inclusionProof.map((h, j) => (j === i ? bad.toString('base64') : h));
        const result = await verifyBundle({ ...bundle, inclusionProof }, jwks);
        assert.equal(result.valid ? 'valid' : result.reason, 'leaf_not_in_tree', `hash ${i} byte ${byte}`);
      }
    }
    for (const leafIndex of [0, 1, 2, 4]) {
      const result = await verifyBundle({ ...bundle, leafIndex }, jwks);
      assert.equal(result.valid ? 'valid' : result.reason, 'leaf_not_in_tree', `leaf index ${leafIndex}`);
    }
  });

  it('fails with tree_size_mismatch when the tree size differs from the signed checkpoint', async () => {
    for (const treeSize of [4, 6, 1000]) {
      const result = await verifyBundle({ ...bundle, treeSize }, jwks);
      assert.equal(result.valid ? 'valid' : result.reason, 'tree_size_mismatch', `tree size ${treeSize}`);
    }
  });

  it('fails when any character of the checkpoint body changes: signature invalid, or malformed where the format breaks', async () => {
    const bodyLength = bundle.checkpoint.indexOf('\n\n') + 1;
    for (let i = 0; i < bodyLength; i++) {
      if (bundle.checkpoint[i] === '\n') continue;
      const checkpoint = replaceChar(bundle.checkpoint, i, `${B64URL}.+/`);
      const result = await verifyBundle({ ...bundle, checkpoint }, jwks);
      const reason = result.valid ? 'valid' : result.reason;
      const line = bundle.checkpoint.slice(0, i).split('\n').length;
      // Line 1 is the origin: a changed origin is signed text, so the signature breaks first.
      const expected = line === 1 ? ['checkpoint_signature_invalid'] : ['checkpoint_signature_invalid', 'checkpoint_malformed'];
      assert.ok(expected.includes(reason), `checkpoint char ${i} (line ${line}): ${reason}`);
    }
    const rootLineStart = bundle.checkpoint.indexOf('\n', bundle.checkpoint.indexOf('\n') + 1) + 1;
    const result = await verifyBundle({ ...bundle, checkpoint: replaceChar(bundle.checkpoint, rootLineStart + 3, 'ABCDEFGH') }, jwks);
    assert.equal(result.valid ? 'valid' : result.reason, 'checkpoint_signature_invalid');
  });

  it('fails with checkpoint_signature_invalid when the checkpoint signature changes', async () => {
    const lineStart = bundle.checkpoint.indexOf('\u2014 ');
    const signatureStart = bundle.checkpoint.indexOf(' ', lineStart + 2) + 1;
    const base64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    // Characters 0–5 encode the 4-byte key id; from 8 on, only signature bytes (the last is padding-sensitive).
    for (let i = signatureStart + 8; i < bundle.checkpoint.length - 3; i++) {
      const result = await verifyBundle({ ...bundle, checkpoint: replaceChar(bundle.checkpoint, i, base64) }, jwks);
      assert.equal(result.valid ? 'valid' : result.reason, 'checkpoint_signature_invalid', `signature char ${i}`);
    }
    const otherKeyId = await verifyBundle({ ...bundle, checkpoint: replaceChar(bundle.checkpoint, signatureStart, base64) }, jwks);
    assert.equal(otherKeyId.valid ? 'valid' : otherKeyId.reason, 'unknown_log_key');
  });

  it('names the precise reason for malformed input instead of throwing', async () => {
    const cases: Array<[unknown, unknown, string]> = [
      [null, jwks, 'bundle_malformed'],
      [{ ...bundle, version: 2 }, jwks, 'bundle_malformed'],
      [{ ...bundle, leafIndex: -1 }, jwks, 'bundle_malformed'],
      [bundle, { nope: true }, 'keys_malformed'],
      [bundle, { keys: jwks.keys.filter((k) => k['x-wo-role'] === 'statement') }, 'keys_malformed'],
      [{ ...bundle, jws: 'abc' }, jwks, 'jws_malformed'],
      [{ ...bundle, jws: `${Buffer.from('{"alg":"RS256","kid":"x"}').toString('base64url')}.e30.AAAA` }, jwks, 'unsupported_algorithm'],
      [{ ...bundle, recordId: 'rec_other' }, jwks, 'bundle_mismatch'],
      [{ ...bundle, checkpoint: 'not a note' }, jwks, 'checkpoint_malformed'],
      [{ ...bundle, inclusionProof: ['AAAA'] }, jwks, 'leaf_not_in_tree'],
    ];
    for (const [input, trusted, reason] of cases) {
      const result = await verifyBundle(input, trusted);
      assert.equal(result.valid ? 'valid' : result.reason, reason, JSON.stringify(result));
    }
  });
});

describe('proof keys', () => {
  it('keeps key files owner-only, and a rotation keeps every old public key published', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wo-keys-'));
    try {
      const first = ProofKeys.loadOrCreate(dir, ORIGIN, systemClock);
      assert.equal(statSync(dir).mode & 0o777, 0o700);
      for (const file of [path.join(dir, 'log-ed25519.json'), ...readdirSync(path.join(dir, 'statement-keys')).map((f) => path.join(dir, 'statement-keys', f))]) {
        assert.equal(statSync(file).mode & 0o777, 0o600, file);
      }
      const { kid, retired } = rotateStatementKey(dir, { now: () => new Date(Date.now() + 1000) });
      assert.notEqual(kid, first.currentKid);
      assert.deepEqual(retired, [first.currentKid]);
      const published = readPublishedKeys(dir);
      assert.deepEqual(published.keys.filter((k) => k['x-wo-role'] === 'statement').map((k) => k.kid).sort(), [first.currentKid, kid].sort());
      assert.ok(published.keys.every((k) => !('d' in k)), 'no private key material is published');
      const reloaded = ProofKeys.loadOrCreate(dir, 'ignored-after-creation', systemClock);
      assert.equal(reloaded.currentKid, kid);
      assert.equal(reloaded.log.name, ORIGIN);
      assert.match(reloaded.log.verifierKey, /^proofs\.example\.test\/log\+[0-9a-f]{8}\+[A-Za-z0-9+/]{43}[A-Za-z0-9+/=]$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
