import { parseSignedCheckpoint, noteKeyId } from './checkpoint.js';
import { bytesEqual, fromBase64, fromBase64Url, fromUtf8, toHex, utf8 } from './encoding.js';
import { canonicalJson, NotIJsonError } from '../canonical-json.js';
import { leafHashAsync, rootFromInclusionProof, type Sha256 } from './merkle.js';
import { cosignatureMessage, isByCosigner, readTimestampedSignature } from './cosignature.js';
import { parseWitnessPolicy, PolicyError, quorumMet, quorumTime, type WitnessPolicy } from './witness-policy.js';
import { STATEMENT_TYPE, SUPPORTED_STATEMENT_VERSIONS, type CompletionStatement, type EvidenceDigest } from './statement.js';
import { BUNDLE_VERSION, CLOCK_SKEW_SECONDS, VERIFY_REASONS, type ProofBundle, type Timestamp, type VerifyOptions, type VerifyReason, type VerifyResult, type Witnessing } from './bundle-format.js';
import type { Certificate } from 'pkijs';
import { parseCertificates, verifyTimestampToken, type TimestampProblem } from './timestamp-token.js';

/**
 * THE verification of a proof bundle, shared by `wo proof verify`, the tests and the /verify page.
 * It runs on WebCrypto (`globalThis.crypto.subtle`, Ed25519 and SHA-256), so it works in Node 20 and
 * in browsers; nothing it imports may use Node-only APIs. Its only trust input is a JWKS.
 *
 * Checks, in order: bundle shape → trusted keys → JWS (alg, kid, Ed25519 signature) → payload is the
 * RFC 8785 form of an understood statement that names the bundle's proof and record → checkpoint
 * note (format, signature by a trusted log key, origin) → tree size → leaf inclusion under the root →
 * with a witness policy (C2SP tlog-policy): each cosignature by a policy witness (key id, the
 * cosignature/v1 message, its timestamp), the quorum, and the statement's `completedAt` against the
 * time the quorum attests the checkpoint existed by → the RFC 3161 token over the checkpoint body when
 * the bundle carries one (required with TSA roots): imprint, signer's EKU, signature, chain to a root.
 */

export * from './bundle-format.js';

type Failure = Extract<VerifyResult, { valid: false }>;

function fail(reason: VerifyReason, detail?: string): Failure {
  return { valid: false, reason, detail: detail ? `${VERIFY_REASONS[reason]} ${detail}` : VERIFY_REASONS[reason] };
}

/** WebCrypto's typings want ArrayBuffer-backed views; ours always are. */
const view = (bytes: Uint8Array) => bytes as Uint8Array<ArrayBuffer>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isIndex(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function readBundle(value: unknown): ProofBundle | Failure {
  if (!isRecord(value)) return fail('bundle_malformed', 'Expected a JSON object.');
  if (value.version !== BUNDLE_VERSION) return fail('bundle_malformed', `Unsupported version ${JSON.stringify(value.version)}.`);
  for (const field of ['proofId', 'recordId', 'jws', 'checkpoint'] as const) {
    if (typeof value[field] !== 'string') return fail('bundle_malformed', `"${field}" must be a string.`);
  }
  if (!isIndex(value.leafIndex)) return fail('bundle_malformed', '"leafIndex" must be a non-negative integer.');
  if (!isIndex(value.treeSize)) return fail('bundle_malformed', '"treeSize" must be a non-negative integer.');
  if (!Array.isArray(value.inclusionProof) || !value.inclusionProof.every((h) => typeof h === 'string')) {
    return fail('bundle_malformed', '"inclusionProof" must be an array of base64 strings.');
  }
  if (value.timestampToken !== undefined && typeof value.timestampToken !== 'string') return fail('bundle_malformed', '"timestampToken" must be a base64 string.');
  return value as unknown as ProofBundle;
}

interface TrustedKeys {
  statement: Map<string, CryptoKey>;
  log: Array<{ origin: string; keyId: Uint8Array; key: CryptoKey }>;
}

async function importEd25519(subtle: SubtleCrypto, raw: Uint8Array): Promise<CryptoKey> {
  return subtle.importKey('raw', view(raw), { name: 'Ed25519' }, false, ['verify']);
}

async function readKeys(subtle: SubtleCrypto, sha256: Sha256, value: unknown): Promise<TrustedKeys | Failure> {
  if (!isRecord(value) || !Array.isArray(value.keys)) return fail('keys_malformed', 'Expected {"keys": [...]}.');
  const trusted: TrustedKeys = { statement: new Map(), log: [] };
  for (const jwk of value.keys as unknown[]) {
    // Keys of other types may share a JWKS; they simply cannot verify our signatures.
    if (!isRecord(jwk) || jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') continue;
    const raw = fromBase64Url(jwk.x);
    if (!raw || raw.length !== 32) return fail('keys_malformed', `Key ${JSON.stringify(jwk.kid)} has an invalid "x".`);
    let key: CryptoKey;
    try {
      key = await importEd25519(subtle, raw);
    } catch {
      return fail('keys_malformed', `Key ${JSON.stringify(jwk.kid)} is not a usable Ed25519 public key.`);
    }
    if (jwk['x-wo-role'] === 'transparency-log') {
      const origin = jwk['x-wo-log-origin'];
      if (typeof origin !== 'string') return fail('keys_malformed', 'The transparency-log key has no "x-wo-log-origin".');
      trusted.log.push({ origin, keyId: await noteKeyId(sha256, origin, raw), key });
    } else if (typeof jwk.kid === 'string') {
      trusted.statement.set(jwk.kid, key);
    }
  }
  if (trusted.log.length === 0) return fail('keys_malformed', 'The JWKS holds no transparency-log key.');
  return trusted;
}

/** Verifies a proof bundle against trusted keys. Never throws for bad input: it answers why. */
export async function verifyBundle(bundleInput: unknown, keysInput: unknown, options: VerifyOptions = {}): Promise<VerifyResult> {
  const subtle = (options.webCrypto ?? globalThis.crypto).subtle;
  const sha256: Sha256 = async (data) => new Uint8Array(await subtle.digest('SHA-256', view(data)));

  const bundle = readBundle(bundleInput);
  if ('valid' in bundle) return bundle;
  const keys = await readKeys(subtle, sha256, keysInput);
  if ('valid' in keys) return keys;
  let tsaRoots: Certificate[] | undefined;
  if (options.tsaRoots !== undefined) {
    const parsed = parseCertificates(options.tsaRoots);
    if (typeof parsed === 'string') return fail('tsa_roots_malformed', `${parsed[0]!.toUpperCase()}${parsed.slice(1)}.`);
    tsaRoots = parsed;
  }
  let policy: WitnessPolicy | undefined;
  if (options.policy !== undefined) {
    try {
      policy = await parseWitnessPolicy(sha256, options.policy);
    } catch (error) {
      if (error instanceof PolicyError) return fail('policy_malformed', `${error.message[0]!.toUpperCase()}${error.message.slice(1)}.`);
      throw error;
    }
  }

  // 1. The statement's signature.
  const parts = bundle.jws.split('.');
  if (parts.length !== 3) return fail('jws_malformed', 'Expected three dot-separated parts.');
  const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
  const headerBytes = fromBase64Url(headerPart);
  const payload = fromBase64Url(payloadPart);
  const signature = fromBase64Url(signaturePart);
  if (!headerBytes || !payload || !signature) return fail('jws_malformed', 'A part is not base64url.');
  let header: unknown;
  try {
    header = JSON.parse(fromUtf8(headerBytes) ?? '');
  } catch {
    return fail('jws_malformed', 'The protected header is not JSON.');
  }
  if (!isRecord(header)) return fail('jws_malformed', 'The protected header is not a JSON object.');
  if (header.alg !== 'EdDSA' && header.alg !== 'Ed25519') return fail('unsupported_algorithm', `alg is ${JSON.stringify(header.alg)}.`);
  if (typeof header.kid !== 'string') return fail('unknown_key', 'The header has no kid.');
  if (Array.isArray(header.crit)) return fail('jws_malformed', 'The header lists critical extensions this verifier does not understand.');
  const statementKey = keys.statement.get(header.kid);
  if (!statementKey) return fail('unknown_key', `kid ${header.kid}.`);
  const signatureValid = await subtle.verify({ name: 'Ed25519' }, statementKey, view(signature), view(utf8(`${headerPart}.${payloadPart}`)));
  if (!signatureValid) return fail('bad_signature', `kid ${header.kid}.`);

  // 2. The statement itself: canonical bytes of a statement we understand, naming this bundle.
  const text = fromUtf8(payload);
  if (text === undefined) return fail('statement_not_canonical', 'The payload is not UTF-8.');
  let statement: unknown;
  try {
    statement = JSON.parse(text);
  } catch {
    return fail('statement_not_canonical', 'The payload is not JSON.');
  }
  let canonical: string;
  try {
    canonical = canonicalJson(statement);
  } catch (error) {
    return fail('statement_not_canonical', error instanceof NotIJsonError ? `Not I-JSON: ${error.message}.` : 'It cannot be canonicalized.');
  }
  if (canonical !== text) return fail('statement_not_canonical');
  if (!isRecord(statement) || !SUPPORTED_STATEMENT_VERSIONS.includes(statement.v as number) || statement.type !== STATEMENT_TYPE) {
    return fail('unsupported_statement', `v=${JSON.stringify(isRecord(statement) ? statement.v : undefined)}, type=${JSON.stringify(isRecord(statement) ? statement.type : undefined)}.`);
  }
  const record = statement.record;
  if (statement.proofId !== bundle.proofId || !isRecord(record) || record.id !== bundle.recordId) {
    return fail('bundle_mismatch', `The statement names proof ${JSON.stringify(statement.proofId)} of record ${JSON.stringify(isRecord(record) ? record.id : undefined)}.`);
  }

  // 3. The checkpoint: a note signed by a trusted log key.
  const checkpoint = parseSignedCheckpoint(bundle.checkpoint);
  if (typeof checkpoint === 'string') return fail('checkpoint_malformed', `${checkpoint[0]!.toUpperCase()}${checkpoint.slice(1)}.`);
  let logOrigin: string | undefined;
  let sawTrustedSignature = false;
  for (const line of checkpoint.signatures) {
    const logKey = keys.log.find((k) => k.origin === line.name && bytesEqual(k.keyId, line.keyId));
    if (!logKey) continue;
    sawTrustedSignature = true;
    if (line.signature.length === 64 && (await subtle.verify({ name: 'Ed25519' }, logKey.key, view(line.signature), view(utf8(checkpoint.body))))) {
      logOrigin = logKey.origin;
      break;
    }
  }
  if (!sawTrustedSignature) return fail('unknown_log_key', `Signed by ${checkpoint.signatures.map((s) => `${s.name}+${toHex(s.keyId)}`).join(', ')}.`);
  if (!logOrigin) return fail('checkpoint_signature_invalid');
  if (checkpoint.origin !== logOrigin) return fail('checkpoint_origin_mismatch', `Checkpoint origin ${JSON.stringify(checkpoint.origin)}, key of ${JSON.stringify(logOrigin)}.`);

  // 4. The statement is a leaf of the tree the checkpoint commits to.
  if (bundle.treeSize !== checkpoint.treeSize) return fail('tree_size_mismatch', `Bundle says ${bundle.treeSize}, checkpoint says ${checkpoint.treeSize}.`);
  const proof: Uint8Array[] = [];
  for (const encoded of bundle.inclusionProof) {
    const hash = fromBase64(encoded);
    if (!hash || hash.length !== 32) return fail('leaf_not_in_tree', 'An inclusion-proof hash is not 32 bytes of base64.');
    proof.push(hash);
  }
  const leaf = await leafHashAsync(sha256, utf8(bundle.jws));
  const root = await rootFromInclusionProof(sha256, bundle.leafIndex, bundle.treeSize, leaf, proof);
  if (!root) return fail('leaf_not_in_tree', `The proof has the wrong length for leaf ${bundle.leafIndex} of ${bundle.treeSize}.`);
  if (!bytesEqual(root, checkpoint.rootHash)) return fail('leaf_not_in_tree', `Leaf ${bundle.leafIndex} of ${bundle.treeSize}.`);

  // 5. With a policy: the witnesses' cosignatures, their quorum, and the time bound they give.
  let witnessing: Witnessing | undefined;
  if (policy) {
    const logKey = keys.log.find((k) => k.origin === logOrigin)!;
    if (policy.logs.length > 0) {
      const raw = new Uint8Array(await subtle.exportKey('raw', logKey.key));
      if (!policy.logs.some((log) => log.name === logOrigin && bytesEqual(log.publicKey, raw))) return fail('log_not_in_policy', `The checkpoint is signed by ${logOrigin}.`);
    }
    const times = new Map<string, number>();
    const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
    for (const witness of policy.witnesses) {
      for (const line of checkpoint.signatures.filter((signature) => isByCosigner(signature, witness.key))) {
        const read = readTimestampedSignature(line.signature);
        const key = await importEd25519(subtle, witness.key.publicKey);
        const verified = read !== undefined && read.timestamp > 0 && (await subtle.verify({ name: 'Ed25519' }, key, view(read.signature), view(cosignatureMessage(checkpoint.body, read.timestamp))));
        if (!verified) return fail('cosignature_invalid', `The cosignature of ${witness.name} (${witness.key.name}).`);
        if (read.timestamp > now + CLOCK_SKEW_SECONDS) return fail('cosignature_invalid', `${witness.name} dated its cosignature ${new Date(read.timestamp * 1000).toISOString()}, in the future.`);
        times.set(witness.name, Math.min(times.get(witness.name) ?? Infinity, read.timestamp));
      }
    }
    const cosigned = [...times.entries()].map(([name, at]) => ({ name, at: new Date(at * 1000).toISOString() }));
    if (!quorumMet(policy, new Set(times.keys()))) {
      return fail('quorum_not_met', `Cosigned by ${cosigned.length} of the policy’s ${policy.witnesses.length} witnesses${cosigned.length ? ` (${cosigned.map((c) => c.name).join(', ')})` : ''}.`);
    }
    const bound = quorumTime(policy, times);
    const completedAt = Date.parse(String((statement as { completedAt?: unknown }).completedAt));
    if (bound !== undefined && !(completedAt <= (bound + CLOCK_SKEW_SECONDS) * 1000)) {
      return fail('completed_after_logged', `It says ${String((statement as { completedAt?: unknown }).completedAt)}; its witnesses attest the log held it by ${new Date(bound * 1000).toISOString()} (allowing ${CLOCK_SKEW_SECONDS} s of clock difference).`);
    }
    witnessing = { cosigned, witnesses: policy.witnesses.length, loggedBy: bound === undefined ? null : new Date(bound * 1000).toISOString() };
  }

  // 6. The TSA's token over the checkpoint body, when there is one (and there must be, with roots).
  let timestamp: Timestamp | undefined;
  if (bundle.timestampToken !== undefined || tsaRoots !== undefined) {
    if (bundle.timestampToken === undefined) return fail('timestamp_missing');
    const der = fromBase64(bundle.timestampToken);
    if (!der) return fail('timestamp_malformed', 'It is not base64.');
    const checked = await verifyTimestampToken(der, checkpoint.body, { ...(tsaRoots ? { roots: tsaRoots } : {}), ...(options.webCrypto ? { webCrypto: options.webCrypto } : {}) });
    if (!checked.valid) return fail(TIMESTAMP_REASONS[checked.problem], `${checked.detail[0]!.toUpperCase()}${checked.detail.slice(1)}.`);
    timestamp = { at: checked.at, tsa: checked.tsa, rootChecked: checked.rootChecked };
    const completedAt = String((statement as { completedAt?: unknown }).completedAt);
    if (checked.rootChecked && !(Date.parse(completedAt) <= Date.parse(checked.at) + CLOCK_SKEW_SECONDS * 1000)) {
      return fail('completed_after_timestamped', `It says ${completedAt}; ${checked.tsa} attests the checkpoint existed by ${checked.at} (allowing ${CLOCK_SKEW_SECONDS} s of clock difference).`);
    }
  }

  return {
    valid: true,
    statement: statement as unknown as CompletionStatement,
    proofId: bundle.proofId,
    recordId: bundle.recordId,
    leafIndex: bundle.leafIndex,
    treeSize: bundle.treeSize,
    statementKid: header.kid,
    logOrigin,
    ...(witnessing ? { witnessing } : {}),
    ...(timestamp ? { timestamp } : {}),
  };
}

/** A token's problem as a verdict's reason (a stored token carries no nonce a verifier could check). */
const TIMESTAMP_REASONS: Record<TimestampProblem, VerifyReason> = {
  malformed: 'timestamp_malformed',
  imprint: 'timestamp_imprint_mismatch',
  nonce: 'timestamp_malformed',
  eku: 'timestamp_not_tsa',
  untrusted_root: 'timestamp_untrusted_root',
  signature: 'timestamp_signature_invalid',
};

/**
 * The evidence entry of a statement that a file with this SHA-256 (lowercase hex) and size is, or
 * undefined when it is none of them. An entry of an attached file also names its size, which must
 * agree; a digest given at completion names only the hash. Use it on a statement verifyBundle
 * accepted: an unverified statement proves nothing about any file.
 */
export function evidenceMatching(statement: CompletionStatement, sha256: string, size: number): EvidenceDigest | undefined {
  const entries: unknown = statement.evidence;
  if (!Array.isArray(entries)) return undefined;
  const evidence = (entries as EvidenceDigest[]).find((entry) => isRecord(entry) && entry.sha256 === sha256 && (entry.size === undefined || entry.size === size));
  if (evidence) return evidence;
  // Version 2: a photo or signature image a checklist answer names is evidence of the proof too.
  for (const checklist of Array.isArray(statement.checklists) ? statement.checklists : []) {
    for (const answer of isRecord(checklist) && Array.isArray(checklist.answers) ? checklist.answers : []) {
      const file = (Array.isArray(answer.files) ? answer.files : []).find((f) => isRecord(f) && f.sha256 === sha256 && f.size === size);
      if (file) return { attachmentId: file.attachmentId, name: `${file.filename} (checklist ${checklist.name}, item ${answer.key}: ${answer.type})`, mediaType: file.mediaType, size: file.size, sha256: file.sha256 };
    }
  }
  return undefined;
}

// --- the verdict: one wording for `wo proof verify`, the SDK's verifyProof() and the /verify page ----

/** A file to check against a proof: the name it was given (a path, a filename), its SHA-256 (lowercase hex) and size. */
export interface FileDigest {
  name: string | undefined;
  sha256: string;
  size: number;
}

/** A file checked against the proof: the statement's evidence entry it is, or null when it is none of them. */
export interface FileVerdict extends FileDigest {
  evidence: EvidenceDigest | null;
}

/** The reason of a valid proof given a file that is not its evidence; the other reasons are VERIFY_REASONS. */
export const NOT_EVIDENCE_REASON = 'A file given to check is not evidence the proof names.';

/** Every reason a verdict can be invalid, with its sentence: what the page lists, and the docs. */
export const VERDICT_REASONS = { ...VERIFY_REASONS, not_evidence: NOT_EVIDENCE_REASON } as const;
export type VerdictReason = keyof typeof VERDICT_REASONS;

/**
 * The one verdict on a bundle and the files given with it: valid only when the proof verifies and
 * every file is evidence it names; otherwise the reason (`not_evidence` when only a file failed).
 */
export type Verdict = (Extract<VerifyResult, { valid: true }> & { files: FileVerdict[] }) | { valid: false; reason: VerdictReason; detail: string; files: FileVerdict[] };

/** What a verified proof is: the first words of every verdict on it. */
function proofSummary(result: Extract<VerifyResult, { valid: true }>): string {
  const witnessed = result.witnessing ? `; ${describeWitnessing(result.witnessing)}` : '';
  const timestamped = result.timestamp ? `; ${describeTimestamp(result.timestamp)}` : '';
  return `proof ${result.proofId} of work order ${result.recordId}, leaf ${result.leafIndex} of ${result.treeSize} in ${result.logOrigin}${witnessed}${timestamped}`;
}

/** The bound a TSA gives: "timestamped no later than T by <TSA>", only when its root was checked. */
export function describeTimestamp(timestamp: Timestamp): string {
  if (timestamp.rootChecked) return `timestamped no later than ${timestamp.at} by ${timestamp.tsa} (RFC 3161)`;
  return `an RFC 3161 timestamp of ${timestamp.at} by ${timestamp.tsa}, whose root was not checked (no TSA roots given): it bounds nothing yet`;
}

/** The bound witnesses give: "logged no later than T, attested by k of n witnesses". */
export function describeWitnessing(witnessing: Witnessing): string {
  const attested = `attested by ${witnessing.cosigned.length} of ${witnessing.witnesses} witnesses`;
  return witnessing.loggedBy ? `logged no later than ${witnessing.loggedBy}, ${attested}` : `the policy's quorum is none: no witness bounds when it was logged (${attested})`;
}

/** One line per checked file, as the CLI prints it and the page lists it. */
export function describeFile(verdict: FileVerdict, named: number): string {
  const name = verdict.name ?? 'a file';
  if (!verdict.evidence) return `not evidence: ${name} (${verdict.size} bytes, sha256 ${verdict.sha256}) is none of the ${named} files the proof names`;
  const { evidence } = verdict;
  return `evidence: ${name} is "${evidence.name}"${evidence.mediaType ? ` (${evidence.mediaType})` : ''}, ${verdict.size} bytes, sha256 ${verdict.sha256}`;
}

/** The verdict on `result` (verifyBundle's) and the files given; files are checked only against a verified statement. */
export function verdictOf(result: VerifyResult, files: readonly FileDigest[]): Verdict {
  if (!result.valid) return { ...result, files: [] };
  const checked = files.map((file) => ({ ...file, evidence: evidenceMatching(result.statement, file.sha256, file.size) ?? null }));
  const strangers = checked.filter((verdict) => verdict.evidence === null);
  if (strangers.length === 0) return { ...result, files: checked };
  const named = result.statement.evidence.length;
  const which = strangers.map((verdict) => describeFile(verdict, named).replace(/^not evidence: /, '')).join('; ');
  return { valid: false, reason: 'not_evidence', detail: `${NOT_EVIDENCE_REASON} ${which}. The proof itself verifies: ${proofSummary(result)}.`, files: checked };
}

/**
 * Who reported the completion, from the signed history: the actor of the change to COMPLETED (an API
 * key, `api_key:key_…`, or the service acting for a schedule or a link). The assignee is only who the
 * work order named; the proof shows who reported the work, not who did it (docs/proofs.md).
 */
export function describeCompletion(statement: CompletionStatement): string {
  const completion = [...statement.history].reverse().find((entry) => entry.to === 'COMPLETED');
  const reporter = completion?.actor ? `${completion.actor}${completion.actorName ? ` for ${JSON.stringify(completion.actorName)}` : ''}` : undefined;
  const actor = reporter ? `by ${reporter} (who reported it; a proof does not show who did the work)` : 'by no actor the statement names';
  const named = [
    ...(statement.assignee ? [JSON.stringify(statement.assignee)] : []),
    ...(statement.assignees ?? []).map((assignee) => `${JSON.stringify(assignee.name)} (${assignee.type} ${assignee.id})`),
  ];
  const assignee = named.length > 0 ? `The work order named ${named.join(' and ')} as assignee${named.length > 1 ? 's' : ''}.` : 'The work order named no assignee.';
  const supersedes = statement.supersedes ? ` It supersedes proof ${statement.supersedes}.` : '';
  return `Work order ${statement.record.id} was reported completed at ${statement.completedAt} ${actor}. ${assignee}${supersedes}`;
}

/** The words of a verdict: `valid` or `invalid: <reason>`, and its detail. The CLI prints `<headline>: <detail>`. */
export function verdictWords(verdict: Verdict): { headline: string; detail: string } {
  return verdict.valid ? { headline: 'valid', detail: proofSummary(verdict) } : { headline: `invalid: ${verdict.reason}`, detail: verdict.detail };
}

/** The lowercase hex SHA-256 of some bytes, on WebCrypto (the browser's, or Node's). */
export async function sha256Hex(bytes: Uint8Array, webCrypto: Crypto = globalThis.crypto): Promise<string> {
  return toHex(new Uint8Array(await webCrypto.subtle.digest('SHA-256', view(bytes))));
}
