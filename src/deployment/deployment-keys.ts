import fs from 'node:fs';
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { ConfigError, type Config } from '../config.js';
import type { Database } from '../db/database.js';
import { toBase64Url } from '../proofs/encoding.js';
import { jwkThumbprint, ProofKeys, rotateStatementKey } from '../proofs/keys.js';
import { readOrCreateSecretKeyFile, readSecretKey, SecretBox, secretKeyFile, type SecretKeySource } from '../webhooks/secret-box.js';
import { compareWithRecorded, type HeldKeys } from './compare-keys.js';
import { lockDeploymentKeys, recordedKeys, recordKeys, type RecordedKey } from './repository.js';

/**
 * Every process of a deployment must hold the same secret-encryption key and the same signing keys:
 * a worker with another secret key cannot decrypt the webhook secrets, and an API with other signing
 * keys publishes a JWKS that does not verify the proofs the others sign. So each process compares
 * its keys with the fingerprints recorded in the database (`deployment_keys`) at start and refuses
 * to run on a mismatch.
 *
 * Only `wo serve` and `wo worker` create keys, and only of a kind with nothing recorded: the first
 * start creates what is missing and records it, the transparency log's origin (from WO_PUBLIC_URL or
 * WO_LOG_ORIGIN) included. Other commands (`wo orgs create`, …) create nothing, so running one
 * before the service is configured cannot fix the origin wrongly. All of it happens under one lock
 * (repository.ts), so processes starting at once create exactly one key of each kind.
 */

/** A process whose keys are not the deployment's; exits like any configuration error. */
export class DeploymentKeysError extends ConfigError {
  override name = 'DeploymentKeysError';
}

export interface DeploymentKeys {
  proofKeys: ProofKeys;
  secrets: SecretBox;
}

export interface DeploymentKeysOptions {
  /** `wo serve` and `wo worker`: on a deployment with no keys recorded, create the missing keys and record them. */
  createKeys: boolean;
  clock: Clock;
  logger: Logger;
}

/**
 * @NOTE: a hash of the secret key under a label of its own: it identifies the key without revealing
 * it, and matches no other hash made of the same key elsewhere.
 */
export function secretKeyFingerprint(key: Buffer): string {
  return toBase64Url(createHash('sha256').update('wo secret-encryption key fingerprint\n').update(key).digest());
}

function heldKeys(secretKey: Buffer | undefined, proofKeys: ProofKeys | undefined, source: SecretKeySource): HeldKeys {
  const published = proofKeys?.jwks().keys ?? [];
  const log = published.find((key) => key['x-wo-role'] === 'transparency-log');
  return {
    ...(secretKey ? { secretKey: secretKeyFingerprint(secretKey) } : {}),
    secretKeySource: source.secretKey ? 'WO_SECRET_KEY' : secretKeyFile(source.keysDir),
    keysDir: source.keysDir,
    ...(log ? { logKey: { fingerprint: jwkThumbprint(log), origin: String(log['x-wo-log-origin']) } } : {}),
    statementKeys: published.filter((key) => key['x-wo-role'] === 'statement').map((key) => jwkThumbprint(key)),
  };
}

/** Loads this process's keys (creating them on a first service start), checks them against the record, records what is new. */
export async function openDeploymentKeys(database: Database, config: Config, options: DeploymentKeysOptions): Promise<DeploymentKeys> {
  const source: SecretKeySource = { secretKey: config.webhooks.secretKey, keysDir: config.keysDir };
  const keys = await database.db.transaction().execute(async (tx) => {
    await lockDeploymentKeys(tx);
    const recorded = await recordedKeys(tx);
    // A kind with nothing recorded: the first start, or a lost key whose record the operator deleted.
    const firstOf = (...kinds: RecordedKey['kind'][]) => options.createKeys && !recorded.some((key) => kinds.includes(key.kind));
    const secretKey = readSecretKey(source) ?? (firstOf('secret-encryption') ? readOrCreateSecretKeyFile(config.keysDir) : undefined);
    const proofKeys = firstOf('transparency-log', 'statement')
      ? ProofKeys.loadOrCreate(config.keysDir, config.proofs.logOrigin, options.clock)
      : ProofKeys.loadExisting(config.keysDir);
    const { mismatches, unrecorded } = compareWithRecorded(recorded, heldKeys(secretKey, proofKeys, source));
    if (mismatches.length > 0) throw new DeploymentKeysError(`this process's keys are not the deployment's:\n  ${mismatches.join('\n  ')}`);
    // Commands only check: recording is left to the service, so that it is the service's keys (and origin) that count.
    if (options.createKeys) await recordKeys(tx, unrecorded, options.clock.now().toISOString());
    return { secretKey, proofKeys };
  });
  const { secretKey, proofKeys } = keys;
  if (options.createKeys && proofKeys && proofKeys.log.name !== config.proofs.logOrigin) {
    options.logger.warn(
      { configuredOrigin: config.proofs.logOrigin, logOrigin: proofKeys.log.name },
      `WO_PUBLIC_URL (or WO_LOG_ORIGIN) names the transparency log "${config.proofs.logOrigin}", but it was named "${proofKeys.log.name}" at its first start: keeping "${proofKeys.log.name}" (a log keeps its origin for life, so that its old checkpoints keep verifying)`,
    );
  }
  if (options.createKeys) warnIfKeysDirShared(config.keysDir, options.logger);
  return {
    proofKeys: proofKeys ?? ProofKeys.notYetCreated(config.keysDir),
    // Without a key yet (a command before the first start), the key file is created when a secret is first sealed.
    secrets: secretKey ? new SecretBox(() => secretKey) : SecretBox.fromConfig(source),
  };
}

/**
 * `wo proof rotate-key`: starts a new statement key in the keys directory and adds it to the
 * record, under the same lock as a start, so that processes started afterwards must hold it.
 */
export async function rotateDeploymentStatementKey(database: Database, keysDir: string, clock: Clock): Promise<{ kid: string; retired: string[] }> {
  return database.db.transaction().execute(async (tx) => {
    await lockDeploymentKeys(tx);
    if (!ProofKeys.loadExisting(keysDir)) throw new DeploymentKeysError(`WO_KEYS_DIR (${keysDir}) holds no signing keys yet: the first \`wo serve\` or \`wo worker\` start creates them`);
    const rotated = rotateStatementKey(keysDir, clock);
    // On a deployment with nothing recorded yet, the first service start records the whole set.
    if ((await recordedKeys(tx)).length > 0) await recordKeys(tx, [{ kind: 'statement', fingerprint: rotated.kid, log_origin: null }], clock.now().toISOString());
    return rotated;
  });
}

/**
 * The service creates the keys directory 0700; one an operator made beforehand (a shared volume) keeps
 * its own mode. The files in it are 0600 either way, but a directory others can read lists them and
 * one they can write lets them be replaced: said at every start, not changed (the volume may be
 * shared on purpose, with a backup job say).
 */
function warnIfKeysDirShared(keysDir: string, logger: Pick<Logger, 'warn'>): void {
  let mode: number;
  try {
    mode = fs.statSync(keysDir).mode & 0o777;
  } catch {
    return;
  }
  if ((mode & 0o077) === 0) return;
  logger.warn({ keysDir, mode: mode.toString(8).padStart(4, '0') }, `the keys directory ${keysDir} is open to other users (mode ${mode.toString(8).padStart(4, '0')}): \`chmod 700\` it, as the service would have created it`);
}
