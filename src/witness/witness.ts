import { createPublicKey, verify } from 'node:crypto';
import { parseSignedCheckpoint, parseVerifierKey } from '../proofs/checkpoint.js';
import { bytesEqual, fromBase64, toBase64Url, toHex } from '../proofs/encoding.js';
import { emptyRoot, verifyConsistency } from '../proofs/merkle.js';
import { sha256Sync } from '../proofs/keys.js';
import type { WitnessKey } from './witness-key.js';
import type { WitnessStore } from './witness-store.js';

/**
 * `POST <prefix>/add-checkpoint` of C2SP tlog-witness (https://c2sp.org/tlog-witness): the old size,
 * a consistency proof from it, and a checkpoint; answered with this witness's cosignature only when
 * the checkpoint is signed by the log's key and extends the last checkpoint it cosigned for that log.
 *
 * Status codes, checked in the order the spec states them:
 *   400  the body is malformed, or the old size is above the checkpoint's size;
 *   404  the origin is not a log this witness follows;
 *   403  no signature by the log's key verifies (or one by it fails);
 *   409  the old size is not the size this witness last cosigned: the body is that size (`text/x.tlog.size`);
 *   422  the consistency proof does not verify, a proof is given where none may be (old size 0, or
 *        equal sizes), or — the same size with another root hash — a split view. v1.0.0 answered that
 *        last case 409; the editor's copy that followed it answers 422, and so does this witness;
 *   200  the cosignature line(s), after the new state is on disk.
 */

export interface WitnessAnswer {
  status: 200 | 400 | 403 | 404 | 409 | 422;
  contentType: 'text/plain; charset=utf-8' | 'text/x.tlog.size';
  body: string;
}

const MAX_PROOF_LINES = 63;

function answer(status: WitnessAnswer['status'], body: string): WitnessAnswer {
  return { status, contentType: 'text/plain; charset=utf-8', body: body.endsWith('\n') ? body : `${body}\n` };
}

interface AddCheckpointRequest {
  oldSize: number;
  proof: Uint8Array[];
  checkpoint: string;
}

function parseRequest(body: string): AddCheckpointRequest | string {
  const firstBreak = body.indexOf('\n');
  if (firstBreak < 0) return 'the body does not start with an "old <size>" line';
  const oldLine = /^old (0|[1-9][0-9]*)$/.exec(body.slice(0, firstBreak));
  if (!oldLine || !Number.isSafeInteger(Number(oldLine[1]))) return 'the first line is not "old <size>" (a decimal without leading zeroes)';
  const proof: Uint8Array[] = [];
  let at = firstBreak + 1;
  for (;;) {
    const end = body.indexOf('\n', at);
    if (end < 0) return 'no empty line ends the consistency proof';
    const line = body.slice(at, end);
    at = end + 1;
    if (line === '') break;
    const hash = fromBase64(line);
    if (!hash || hash.length !== 32) return 'a consistency proof line is not the base64 of a 32-byte hash';
    proof.push(hash);
    if (proof.length > MAX_PROOF_LINES) return `more than ${MAX_PROOF_LINES} consistency proof lines`;
  }
  const checkpoint = body.slice(at);
  // signed-note: "MUST NOT contain any ASCII control characters (those below U+0020) other than newline".
  if ([...checkpoint].some((c) => c < ' ' && c !== '\n')) return 'the checkpoint holds a control character other than newline';
  return { oldSize: Number(oldLine[1]), proof, checkpoint };
}

/** An Ed25519 public key for node:crypto from its 32 raw bytes. */
function ed25519PublicKey(raw: Uint8Array) {
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: toBase64Url(raw) }, format: 'jwk' });
}

export class Witness {
  constructor(
    private readonly store: WitnessStore,
    private readonly key: WitnessKey,
    private readonly now: () => Date,
  ) {}

  async addCheckpoint(body: string): Promise<WitnessAnswer> {
    const request = parseRequest(body);
    if (typeof request === 'string') return answer(400, request);
    const note = parseSignedCheckpoint(request.checkpoint);
    if (typeof note === 'string') return answer(400, `the checkpoint is malformed: ${note}`);

    const log = this.store.log(note.origin);
    if (!log) return answer(404, `this witness does not follow the log "${note.origin}" (wo witness add-log)`);
    const logKey = parseVerifierKey(log.vkey)!;
    // signed-note: signatures by unknown keys are ignored; one by the known key must verify.
    const byLog = note.signatures.filter((line) => line.name === logKey.name && bytesEqual(line.keyId, logKey.keyId));
    if (byLog.length === 0) return answer(403, `the checkpoint carries no signature by the key this witness trusts for "${note.origin}"`);
    const publicKey = ed25519PublicKey(logKey.publicKey);
    if (!byLog.every((line) => line.signature.length === 64 && verify(null, Buffer.from(note.body, 'utf8'), publicKey, line.signature))) {
      return answer(403, `a signature by the key of "${note.origin}" does not verify`);
    }

    const refuse = (status: 409 | 422, reason: string): WitnessAnswer => {
      // A validly signed checkpoint this witness will not cosign may be evidence of a fork: kept.
      this.store.recordRefusal(note.origin, status, reason, body, this.now().toISOString());
      return answer(status, reason);
    };
    if (request.oldSize > note.treeSize) return answer(400, `the old size ${request.oldSize} is above the checkpoint's size ${note.treeSize}`);

    const latest = this.store.latest(note.origin);
    const latestSize = latest?.size ?? 0;
    if (request.oldSize !== latestSize) return { status: 409, contentType: 'text/x.tlog.size', body: `${latestSize}\n` };
    const rootHex = toHex(note.rootHash);
    if (note.treeSize === 0 && !bytesEqual(note.rootHash, emptyRoot(sha256Sync))) return refuse(422, 'a checkpoint of size zero must have the root hash of the empty tree');
    if (latest && note.treeSize === latest.size) {
      if (rootHex !== latest.rootHash) return refuse(422, `a checkpoint of size ${note.treeSize} with another root hash than the one this witness cosigned: a split view`);
      if (request.proof.length > 0) return refuse(422, 'the proof between two trees of the same size must be empty');
    } else if (request.oldSize === 0) {
      if (request.proof.length > 0) return refuse(422, 'the proof from size 0 must be empty');
    } else if (!(await verifyConsistency(sha256Sync, latest!.size, note.treeSize, Buffer.from(latest!.rootHash, 'hex'), note.rootHash, request.proof))) {
      return refuse(422, `the consistency proof from ${latest!.size} to ${note.treeSize} does not verify: the checkpoint does not extend the one this witness cosigned`);
    }

    let cosignature = '';
    const swapped = this.store.compareAndSwap(
      latest && { size: latest.size, rootHash: latest.rootHash },
      { origin: note.origin, size: note.treeSize, rootHash: rootHex, updatedAt: this.now().toISOString() },
      (previousTimestamp) => {
        // Cosignature times never go backwards for a log, even if the clock does.
        const timestamp = Math.max(Math.floor(this.now().getTime() / 1000), previousTimestamp);
        cosignature = this.key.cosign(note.body, timestamp);
        return { timestamp, note: `${request.checkpoint}${cosignature}` };
      },
    );
    // Another request moved the state since it was read: this one was checked against an old state.
    if (!swapped.swapped) return { status: 409, contentType: 'text/x.tlog.size', body: `${swapped.current?.size ?? 0}\n` };
    return answer(200, cosignature);
  }
}
