import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compareWithRecorded, type HeldKeys } from './compare-keys.js';
import type { RecordedKey } from './repository.js';

const held: HeldKeys = {
  secretKey: 'secret-1',
  secretKeySource: 'WO_SECRET_KEY',
  keysDir: '/srv/wo/keys',
  logKey: { fingerprint: 'log-1', origin: 'wo.example.com/work-orders/log' },
  statementKeys: ['statement-1'],
};

const recorded: RecordedKey[] = [
  { kind: 'secret-encryption', fingerprint: 'secret-1', log_origin: null },
  { kind: 'transparency-log', fingerprint: 'log-1', log_origin: 'wo.example.com/work-orders/log' },
  { kind: 'statement', fingerprint: 'statement-1', log_origin: null },
];

describe('comparing a process’s keys with the deployment’s record', () => {
  it('records every held key when nothing is recorded yet', () => {
    assert.deepEqual(compareWithRecorded([], held), { mismatches: [], unrecorded: recorded });
  });

  it('accepts the recorded keys, with nothing to add', () => {
    assert.deepEqual(compareWithRecorded(recorded, held), { mismatches: [], unrecorded: [] });
  });

  it('refuses another secret key, naming WO_SECRET_KEY, or the key file when the variable is unset', () => {
    const fromVariable = compareWithRecorded(recorded, { ...held, secretKey: 'secret-2' });
    assert.equal(fromVariable.mismatches.length, 1);
    assert.match(fromVariable.mismatches[0]!, /^WO_SECRET_KEY is not this deployment's secret-encryption key \(fingerprint secret-2, recorded secret-1\): set WO_SECRET_KEY/);
    const fromFile = compareWithRecorded(recorded, { ...held, secretKey: 'secret-2', secretKeySource: '/srv/wo/keys/webhook-secrets.key' });
    assert.match(fromFile.mismatches[0]!, /^WO_SECRET_KEY is not set and \/srv\/wo\/keys\/webhook-secrets.key is not this deployment's/);
    const { secretKey: _none, ...withoutSecret } = held;
    const missing = compareWithRecorded(recorded, { ...withoutSecret, secretKeySource: '/srv/wo/keys/webhook-secrets.key' });
    assert.match(missing.mismatches[0]!, /^WO_SECRET_KEY is not set and \/srv\/wo\/keys\/webhook-secrets.key does not exist, but this deployment encrypts webhook secrets/);
  });

  it('refuses a keys directory with no keys or another log key, naming WO_KEYS_DIR', () => {
    const { logKey: _noLog, ...withoutLog } = held;
    const empty = compareWithRecorded(recorded, { ...withoutLog, statementKeys: [] });
    assert.deepEqual(empty.mismatches, [
      "WO_KEYS_DIR (/srv/wo/keys) holds no signing keys, but this deployment's are recorded: point WO_KEYS_DIR at the deployment's keys directory (or a current copy of it)",
    ]);
    const other = compareWithRecorded(recorded, { ...held, logKey: { fingerprint: 'log-2', origin: 'wo.example.com/work-orders/log' }, statementKeys: ['statement-9'] });
    assert.equal(other.mismatches.length, 2);
    assert.match(other.mismatches[0]!, /^WO_KEYS_DIR \(\/srv\/wo\/keys\) holds another transparency-log key/);
    assert.match(other.mismatches[1]!, /lacks statement key statement-1 .*restart with the current keys directory$/);
  });

  it('refuses an older copy of the keys directory after a rotation, and records the keys of a newer one', () => {
    const rotated = [...recorded, { kind: 'statement' as const, fingerprint: 'statement-2', log_origin: null }];
    const older = compareWithRecorded(rotated, held);
    assert.deepEqual(older.mismatches, [
      'WO_KEYS_DIR (/srv/wo/keys) lacks statement key statement-2 of this deployment (rotated since this copy was made?): restart with the current keys directory',
    ]);
    const newer = compareWithRecorded(recorded, { ...held, statementKeys: ['statement-1', 'statement-2'] });
    assert.deepEqual(newer, { mismatches: [], unrecorded: [{ kind: 'statement', fingerprint: 'statement-2', log_origin: null }] });
  });

  it('refuses a log key whose file names another origin than the recorded one', () => {
    const renamed = compareWithRecorded(recorded, { ...held, logKey: { fingerprint: 'log-1', origin: 'localhost:8080/work-orders/log' } });
    assert.match(renamed.mismatches[0]!, /names the log "localhost:8080\/work-orders\/log", but this deployment's log is "wo.example.com\/work-orders\/log"/);
  });
});
