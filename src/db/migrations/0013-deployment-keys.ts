import { sql } from 'kysely';
import type { VersionedMigration } from '../migrate.js';

/**
 * `deployment_keys`: fingerprints of the keys every process of the deployment must hold, recorded
 * by the first `wo serve` or `wo worker` start (src/deployment/deployment-keys.ts): the
 * secret-encryption key (a hash of it, never the key), the transparency-log key with the log's
 * origin, and every statement key (RFC 7638 thumbprints of the public keys). A process holding
 * other keys refuses to start instead of failing silently (undecryptable webhook secrets, proofs
 * signed with keys the other processes do not publish).
 *
 * During a rolling upgrade, processes of the previous release neither read nor write it.
 */
export const deploymentKeys: VersionedMigration = {
  name: '0013-deployment-keys',
  // Re-runnable: one statement that is a no-op once done.
  async up(db) {
    await sql`
      CREATE TABLE IF NOT EXISTS deployment_keys (
        kind text NOT NULL,
        fingerprint text NOT NULL,
        log_origin text,
        recorded_at text NOT NULL,
        PRIMARY KEY (kind, fingerprint)
      )`.execute(db);
  },
  async down(db) {
    await sql`DROP TABLE IF EXISTS deployment_keys`.execute(db);
  },
};
