import { createHash, createPrivateKey, hash, generateKeyPairSync, sign, type JsonWebKey, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Clock } from '../clock.js';
import { createPrivateFile, ensurePrivateDir, replacePrivateFile } from '../private-files.js';
import { formatSignedNote, formatVerifierKey, isValidKeyName } from './checkpoint.js';
import { fromBase64Url, toBase64Url, toHex, utf8 } from './encoding.js';
import { compactStatementJws, type StatementSigningKey } from './statement-signing.js';
import type { Jwks, PublishedJwk } from './verify.js';

/**
 * The proof signing keys, kept as files under `config.keysDir`, never in the database:
 *
 *   <keysDir>/log-ed25519.json                       the transparency log's checkpoint key
 *   <keysDir>/statement-keys/<created>-<kid>.json    every statement key ever used
 *
 * The newest statement key file holding a private key signs new statements. Rotation writes a new
 * key and strips the private half from the older files, so their public keys stay published
 * (JWKS) forever and old proofs keep verifying.
 *
 * @NOTE: files are created with mode 0600 in directories with mode 0700, complete before they appear
 * under their name (src/private-files.ts), so a process reading them never sees half a key, and two
 * processes cannot overwrite each other's fresh key. Which process creates the keys, and that all
 * processes hold the same ones, is decided in src/deployment/deployment-keys.ts.
 */

const LOG_KEY_FILE = 'log-ed25519.json';
const STATEMENT_DIR = 'statement-keys';

interface Ed25519Jwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  d?: string;
}

interface StatementKeyFile {
  kid: string;
  createdAt: string;
  retiredAt?: string;
  jwk: Ed25519Jwk;
}

interface LogKeyFile {
  createdAt: string;
  /** The log origin, fixed when the key is made: old checkpoints must keep verifying under it. */
  origin: string;
  jwk: Ed25519Jwk;
}

export interface LogKey {
  /** Key name in signed notes: the log origin. */
  name: string;
  keyId: Uint8Array;
  publicKey: Uint8Array;
  verifierKey: string;
  kid: string;
}

export class KeyFileError extends Error {
  override name = 'KeyFileError';
}

/** RFC 7638 thumbprint of an Ed25519 public JWK (base64url SHA-256 of its canonical members). */
export function jwkThumbprint(jwk: Pick<Ed25519Jwk, 'crv' | 'kty' | 'x'>): string {
  return toBase64Url(createHash('sha256').update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x })).digest());
}

export function sha256Sync(data: Uint8Array): Uint8Array {
  // One call, no Hash object: a proof served hashes about log2(tree size) nodes.
  return hash('sha256', data, 'buffer');
}

function newKeyJwk(): Ed25519Jwk {
  const { privateKey } = generateKeyPairSync('ed25519');
  return privateKey.export({ format: 'jwk' }) as Ed25519Jwk;
}

function publicOnly(jwk: Ed25519Jwk): Ed25519Jwk {
  return { kty: jwk.kty, crv: jwk.crv, x: jwk.x };
}

function keyFileText(content: unknown): string {
  return `${JSON.stringify(content, null, 2)}\n`;
}

function readJson<T>(file: string): T {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch (error) {
    throw new KeyFileError(`cannot read key file ${file}: ${(error as Error).message}`);
  }
}

function compactTime(iso: string): string {
  return iso.replace(/[-:.]/g, '');
}

function listStatementKeyFiles(keysDir: string): Array<{ file: string; key: StatementKeyFile }> {
  const dir = path.join(keysDir, STATEMENT_DIR);
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => ({ file: path.join(dir, name), key: readJson<StatementKeyFile>(path.join(dir, name)) }));
}

function createStatementKeyFile(keysDir: string, clock: Clock): StatementKeyFile {
  ensurePrivateDir(path.join(keysDir, STATEMENT_DIR));
  const jwk = newKeyJwk();
  const key: StatementKeyFile = { kid: jwkThumbprint(jwk), createdAt: clock.now().toISOString(), jwk };
  createPrivateFile(path.join(keysDir, STATEMENT_DIR, `${compactTime(key.createdAt)}-${key.kid}.json`), keyFileText(key));
  return key;
}

/**
 * Starts a new statement key and retires the others (their private halves are deleted, their
 * public keys stay published). Running processes sign with the key they loaded until restarted.
 */
export function rotateStatementKey(keysDir: string, clock: Clock): { kid: string; retired: string[] } {
  const before = listStatementKeyFiles(keysDir);
  const fresh = createStatementKeyFile(keysDir, clock);
  const retired: string[] = [];
  for (const { file, key } of before) {
    if (!key.jwk.d) continue;
    const stripped: StatementKeyFile = { ...key, retiredAt: clock.now().toISOString(), jwk: publicOnly(key.jwk) };
    replacePrivateFile(file, keyFileText(stripped));
    retired.push(key.kid);
  }
  return { kid: fresh.kid, retired };
}

function statementJwk(key: StatementKeyFile): PublishedJwk {
  return { ...publicOnly(key.jwk), kid: key.kid, use: 'sig', alg: 'EdDSA', 'x-wo-role': 'statement', 'x-wo-created-at': key.createdAt };
}

function logKeyFrom(jwk: Ed25519Jwk, name: string): LogKey {
  const publicKey = fromBase64Url(jwk.x);
  if (!publicKey || publicKey.length !== 32) throw new KeyFileError('the log key file holds no valid Ed25519 public key');
  const keyId = sha256Sync(new Uint8Array([...utf8(name), 0x0a, 0x01, ...publicKey])).slice(0, 4);
  return { name, keyId, publicKey, verifierKey: formatVerifierKey(name, keyId, publicKey), kid: jwkThumbprint(jwk) };
}

/**
 * @NOTE: the log key is published in the same JWKS so one file is all a verifier trusts. It never
 * signs a JWS, only checkpoint bodies, which contain newlines and so can never parse as a JWS
 * signing input: a generic JOSE verifier cannot be tricked into accepting a log signature.
 */
function logJwk(log: LogKey, jwk: Ed25519Jwk): PublishedJwk {
  return {
    ...publicOnly(jwk),
    kid: log.kid,
    use: 'sig',
    alg: 'EdDSA',
    'x-wo-role': 'transparency-log',
    'x-wo-log-origin': log.name,
    'x-wo-note-key-id': toHex(log.keyId),
    'x-wo-verifier-key': log.verifierKey,
  };
}

/** Reads the public verification material (JWKS) from a keys directory, without creating anything. */
export function readPublishedKeys(keysDir: string): Jwks {
  const logFile = path.join(keysDir, LOG_KEY_FILE);
  if (!fs.existsSync(logFile)) throw new KeyFileError(`no log key in ${keysDir}`);
  const { jwk, origin } = readJson<LogKeyFile>(logFile);
  return {
    keys: [...listStatementKeyFiles(keysDir).map(({ key }) => statementJwk(key)), logJwk(logKeyFrom(jwk, origin), jwk)],
  };
}

interface LoadedKeys {
  statementKid: string;
  statementPrivate: KeyObject;
  logPrivate: KeyObject;
  log: LogKey;
}

function loadKeys(keysDir: string): LoadedKeys {
  const logFile = path.join(keysDir, LOG_KEY_FILE);
  const { jwk: logKeyJwk, origin: logName } = readJson<LogKeyFile>(logFile);
  if (!logKeyJwk.d || typeof logName !== 'string') throw new KeyFileError(`${logFile} holds no private key or no origin`);
  const current = listStatementKeyFiles(keysDir).filter(({ key }) => key.jwk.d).at(-1)?.key;
  if (!current) throw new KeyFileError(`no usable statement key in ${keysDir}`);
  return {
    statementKid: current.kid,
    statementPrivate: createPrivateKey({ key: current.jwk as unknown as JsonWebKey, format: 'jwk' }),
    logPrivate: createPrivateKey({ key: logKeyJwk as unknown as JsonWebKey, format: 'jwk' }),
    log: logKeyFrom(logKeyJwk, logName),
  };
}

/** The signing keys of one process, loaded at start. */
export class ProofKeys {
  private constructor(
    private readonly keysDir: string,
    private readonly loaded: LoadedKeys | undefined,
  ) {}

  /**
   * Loads the keys, creating the log key and a first statement key when missing. `initialOrigin`
   * names the log only when its key is created; afterwards the key file's origin wins.
   */
  static loadOrCreate(keysDir: string, initialOrigin: string, clock: Clock): ProofKeys {
    ensurePrivateDir(keysDir);
    const logFile = path.join(keysDir, LOG_KEY_FILE);
    if (!fs.existsSync(logFile)) {
      if (!isValidKeyName(initialOrigin)) throw new KeyFileError(`the log origin "${initialOrigin}" cannot name a note key (no spaces or "+")`);
      createPrivateFile(logFile, keyFileText({ createdAt: clock.now().toISOString(), origin: initialOrigin, jwk: newKeyJwk() } satisfies LogKeyFile));
    }
    if (!listStatementKeyFiles(keysDir).some(({ key }) => key.jwk.d)) createStatementKeyFile(keysDir, clock);
    return new ProofKeys(keysDir, loadKeys(keysDir));
  }

  /** The keys in `keysDir`, or undefined when it holds none yet (no log key). Creates nothing. */
  static loadExisting(keysDir: string): ProofKeys | undefined {
    if (!fs.existsSync(path.join(keysDir, LOG_KEY_FILE))) return undefined;
    return new ProofKeys(keysDir, loadKeys(keysDir));
  }

  /**
   * Stands in for keys that do not exist yet, in a command that never signs or publishes (creating
   * them is left to `wo serve` and `wo worker`): using them throws a KeyFileError.
   */
  static notYetCreated(keysDir: string): ProofKeys {
    return new ProofKeys(keysDir, undefined);
  }

  private get keys(): LoadedKeys {
    if (!this.loaded) throw new KeyFileError(`no proof signing keys in ${this.keysDir} yet: the first \`wo serve\` or \`wo worker\` start creates them`);
    return this.loaded;
  }

  get log(): LogKey {
    return this.keys.log;
  }

  get currentKid(): string {
    return this.keys.statementKid;
  }

  /** Every statement key ever used plus the log key; re-read so a rotation shows up without restart. */
  jwks(): Jwks {
    return readPublishedKeys(this.keysDir);
  }

  /** The key that signs new statements (in the sequencer's signing thread). */
  get statementSigningKey(): StatementSigningKey {
    return { kid: this.keys.statementKid, privateKey: this.keys.statementPrivate };
  }

  /** Compact JWS (RFC 7515) over `payload`, Ed25519, `kid` = RFC 7638 thumbprint. */
  signJws(payload: Uint8Array): string {
    return compactStatementJws(payload, this.statementSigningKey);
  }

  /** Signs a checkpoint body with the log key: the C2SP signed note. */
  signCheckpoint(body: string): string {
    const signature = sign(null, Buffer.from(body, 'utf8'), this.keys.logPrivate);
    return formatSignedNote(body, [{ name: this.log.name, keyId: this.log.keyId, signature }]);
  }
}
