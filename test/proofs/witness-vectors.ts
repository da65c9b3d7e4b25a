import { generateKeyPairSync, sign } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { systemClock } from '../../src/clock.js';
import { canonicalBytes } from '../../src/canonical-json.js';
import { formatCheckpointBody } from '../../src/proofs/checkpoint.js';
import { cosignatureMessage, cosignerKeyIdSync, formatCosignatureLine, formatCosignerVkey, type CosignerKey } from '../../src/proofs/cosignature.js';
import { ProofKeys, sha256Sync } from '../../src/proofs/keys.js';
import { inclusionProof, leafArraySource, leafHash, rootHash } from '../../src/proofs/merkle.js';
import { buildCompletionStatement } from '../../src/proofs/statement.js';
import { BUNDLE_MEDIA_TYPE, type Jwks, type ProofBundle } from '../../src/proofs/verify.js';
import type { WorkOrder } from '../../src/records/schemas.js';

/**
 * Bundles with and without witnesses' cosignatures, built without a service, and the verdict each
 * must get: the same vectors go through `wo proof verify --policy` and the /verify page.
 */

export interface WitnessVector {
  name: string;
  bundle: ProofBundle;
  /** With `policy`, the first line `wo proof verify` prints and the page's headline: detail. */
  expected: RegExp;
}

export interface WitnessVectors {
  jwks: Jwks;
  /** W1, W2, W3; quorum 2 of 3. */
  policy: string;
  vectors: WitnessVector[];
  /** An old bundle, without cosignatures: valid without a policy. */
  oldBundle: ProofBundle;
  remove(): void;
}

const ORIGIN = 'vectors.example.test/log';
const COMPLETED_AT = '2026-01-02T03:04:05.678Z';
const COMPLETED_SECONDS = Math.floor(Date.parse(COMPLETED_AT) / 1000);

function workOrder(id: string): WorkOrder {
  return {
    id, recordId: id, status: 'COMPLETED', categoryId: 'cat_01', address: '12 Harbour Road', requesterName: 'Ann Tenant', description: 'Kitchen tap leaks',
    priority: 'MEDIUM', dueAt: null, assignee: 'Bob Plumber', assignees: [], costs: null, laborMinutes: 0, assetId: null, locationId: null, externalRef: null, metadata: {}, customFields: {}, checklists: [], source: null, requestId: null,
    resolutionNotes: 'Replaced the washer', completedAt: COMPLETED_AT, closedAt: null, cancelledAt: null, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: COMPLETED_AT, version: 4,
  };
}

function cosigner(name: string) {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = new Uint8Array(publicKey.export({ format: 'der', type: 'spki' }).subarray(-32));
  const key: CosignerKey = { name, keyId: cosignerKeyIdSync(sha256Sync, name, raw), publicKey: raw };
  return { key, vkey: formatCosignerVkey(key), cosign: (body: string, at: number) => formatCosignatureLine(key, at, sign(null, cosignatureMessage(body, at), privateKey)) };
}

export function witnessVectors(): WitnessVectors {
  const keysDir = mkdtempSync(path.join(tmpdir(), 'wo-vector-keys-'));
  const keys = ProofKeys.loadOrCreate(keysDir, ORIGIN, systemClock);
  const jwsList = Array.from({ length: 3 }, (_, i) =>
    keys.signJws(
      canonicalBytes(
        buildCompletionStatement({
          proofId: `prf_${i}`, orgId: 'org_1', record: workOrder(`rec_${i}`),
          history: [{ id: 'rev_1', recordId: `rec_${i}`, action: 'complete', fromStatus: 'IN_PROGRESS', toStatus: 'COMPLETED', actor: { type: 'api_key', id: 'key_1' }, data: {}, occurredAt: COMPLETED_AT }],
          evidence: [], supersedes: null, checklists: [],
        }),
      ),
    ),
  );
  const source = leafArraySource(sha256Sync, jwsList.map((jws) => leafHash(sha256Sync, new TextEncoder().encode(jws))));
  const body = formatCheckpointBody({ origin: ORIGIN, treeSize: 3, rootHash: rootHash(sha256Sync, source, 3) });
  const logSigned = keys.signCheckpoint(body);
  const oldBundle: ProofBundle = {
    version: 1, mediaType: BUNDLE_MEDIA_TYPE, proofId: 'prf_1', recordId: 'rec_1', jws: jwsList[1]!, leafIndex: 1, treeSize: 3,
    inclusionProof: inclusionProof(sha256Sync, source, 1, 3).map((hash) => Buffer.from(hash).toString('base64')),
    checkpoint: logSigned,
    keys: { statementKid: keys.currentKid, logKeyName: keys.log.name, logKeyId: Buffer.from(keys.log.keyId).toString('hex') },
  };
  const [w1, w2, w3] = [cosigner('w1.vectors.test'), cosigner('w2.vectors.test'), cosigner('w3.vectors.test')] as const;
  const policy = `witness W1 ${w1.vkey}\nwitness W2 ${w2.vkey}\nwitness W3 ${w3.vkey}\ngroup two 2 W1 W2 W3\nquorum two\n`;
  const withLines = (...lines: string[]): ProofBundle => ({ ...oldBundle, checkpoint: `${logSigned}${lines.join('')}` });
  const t1 = COMPLETED_SECONDS + 10;
  const t2 = COMPLETED_SECONDS + 20;
  const boundIso = new Date(t2 * 1000).toISOString();
  // A character inside the Ed25519 signature (after the key id and the timestamp), so the line still parses.
  const line = w2.cosign(body, t2);
  const at = line.lastIndexOf(' ') + 60;
  const tampered = `${line.slice(0, at)}${line[at] === 'A' ? 'B' : 'A'}${line.slice(at + 1)}`;
  const vectors: WitnessVector[] = [
    { name: 'witnessed by two of three', bundle: withLines(w1.cosign(body, t1), w2.cosign(body, t2)), expected: new RegExp(`^valid: proof prf_1 of work order rec_1, leaf 1 of 3 in vectors\\.example\\.test/log; logged no later than ${boundIso.replace(/\./g, '\\.')}, attested by 2 of 3 witnesses$`) },
    { name: 'all three: the bound is the second earliest', bundle: withLines(w3.cosign(body, t2 + 100), w1.cosign(body, t1), w2.cosign(body, t2)), expected: new RegExp(`logged no later than ${boundIso.replace(/\./g, '\\.')}, attested by 3 of 3 witnesses$`) },
    { name: 'one witness only', bundle: withLines(w1.cosign(body, t1)), expected: /^invalid: quorum_not_met: .*Cosigned by 1 of the policy’s 3 witnesses \(W1\)\.$/ },
    { name: 'a cosignature altered', bundle: withLines(w1.cosign(body, t1), tampered), expected: /^invalid: cosignature_invalid: .*W2/ },
    { name: 'cosigned an hour before its completion', bundle: withLines(w1.cosign(body, COMPLETED_SECONDS - 3600), w2.cosign(body, COMPLETED_SECONDS - 3600)), expected: /^invalid: completed_after_logged: / },
    { name: 'an old bundle, without cosignatures', bundle: oldBundle, expected: /^invalid: quorum_not_met: .*Cosigned by 0 of the policy’s 3 witnesses\.$/ },
  ];
  return { jwks: keys.jwks(), policy, vectors, oldBundle, remove: () => rmSync(keysDir, { recursive: true, force: true }) };
}
