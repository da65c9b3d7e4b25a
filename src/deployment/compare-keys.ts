import type { RecordedKey } from './repository.js';

/** The keys one process holds, by fingerprint, and where they come from (for the messages). */
export interface HeldKeys {
  /** Fingerprint of the secret-encryption key; absent when neither WO_SECRET_KEY nor the key file exists. */
  secretKey?: string;
  /** `WO_SECRET_KEY`, or the key file's path when the variable is unset. */
  secretKeySource: string;
  keysDir: string;
  logKey?: { fingerprint: string; origin: string };
  /** Every statement key in the keys directory, the retired ones included. */
  statementKeys: string[];
}

export interface KeyComparison {
  /** Why this process cannot work with this deployment; each says which variable to fix and how. */
  mismatches: string[];
  /** Keys this process holds that the record lacks (a first start, or a rotation not yet recorded). */
  unrecorded: RecordedKey[];
}

/**
 * Compares the keys a process holds with the deployment's record. Secret-encryption and log keys
 * must be the recorded ones. Statement keys must include every recorded one: a keys directory
 * lacking one is an older copy, whose JWKS would not publish the keys other processes sign with. A
 * directory holding more (rotated with `wo proof rotate-key`, not yet recorded) is newer, and its
 * extra keys are to be recorded. A kind with nothing recorded yet is to be recorded as held.
 */
export function compareWithRecorded(recorded: readonly RecordedKey[], held: HeldKeys): KeyComparison {
  const mismatches: string[] = [];
  const unrecorded: RecordedKey[] = [];
  const ofKind = (kind: RecordedKey['kind']) => recorded.filter((key) => key.kind === kind);
  const keysDir = `WO_KEYS_DIR (${held.keysDir})`;

  const secrets = ofKind('secret-encryption');
  if (secrets.length === 0) {
    if (held.secretKey) unrecorded.push({ kind: 'secret-encryption', fingerprint: held.secretKey, log_origin: null });
  } else if (!held.secretKey) {
    mismatches.push(
      `WO_SECRET_KEY is not set and ${held.secretKeySource} does not exist, but this deployment encrypts webhook secrets with a recorded key (fingerprint ${secrets[0]!.fingerprint}): set WO_SECRET_KEY to the key the other processes use, or give them all the same WO_KEYS_DIR`,
    );
  } else if (!secrets.some((key) => key.fingerprint === held.secretKey)) {
    mismatches.push(
      `${held.secretKeySource === 'WO_SECRET_KEY' ? 'WO_SECRET_KEY' : `WO_SECRET_KEY is not set and ${held.secretKeySource}`} is not this deployment's secret-encryption key (fingerprint ${held.secretKey}, recorded ${secrets[0]!.fingerprint}): set WO_SECRET_KEY to the key the other processes use (the webhook secrets in the database cannot be decrypted with this one)`,
    );
  }

  const log = ofKind('transparency-log')[0];
  const holdsNoKeys = log !== undefined && !held.logKey;
  if (!log) {
    if (held.logKey) unrecorded.push({ kind: 'transparency-log', fingerprint: held.logKey.fingerprint, log_origin: held.logKey.origin });
  } else if (!held.logKey) {
    mismatches.push(`${keysDir} holds no signing keys, but this deployment's are recorded: point WO_KEYS_DIR at the deployment's keys directory (or a current copy of it)`);
  } else if (log.fingerprint !== held.logKey.fingerprint) {
    mismatches.push(
      `${keysDir} holds another transparency-log key (${held.logKey.fingerprint}) than this deployment's (${log.fingerprint}): point WO_KEYS_DIR at the deployment's keys directory (or a current copy of it)`,
    );
  } else if (log.log_origin !== null && log.log_origin !== held.logKey.origin) {
    mismatches.push(`${keysDir} names the log "${held.logKey.origin}", but this deployment's log is "${log.log_origin}": restore log-ed25519.json from the deployment's keys directory`);
  }

  const statements = ofKind('statement');
  const heldStatements = new Set(held.statementKeys);
  const missing = statements.filter((key) => !heldStatements.has(key.fingerprint));
  if (!holdsNoKeys && missing.length > 0) {
    mismatches.push(
      `${keysDir} lacks statement key${missing.length > 1 ? 's' : ''} ${missing.map((key) => key.fingerprint).join(', ')} of this deployment (rotated since this copy was made?): restart with the current keys directory`,
    );
  }
  const recordedStatements = new Set(statements.map((key) => key.fingerprint));
  for (const fingerprint of held.statementKeys) {
    if (!recordedStatements.has(fingerprint)) unrecorded.push({ kind: 'statement', fingerprint, log_origin: null });
  }
  return { mismatches, unrecorded };
}
