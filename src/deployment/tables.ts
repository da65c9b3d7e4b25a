/** Row types of this feature's tables (timestamps ISO 8601 UTC text, JSON columns serialized text; see src/db/tables.ts). */
export type DeploymentKeyKind = 'secret-encryption' | 'transparency-log' | 'statement';

/** A key every process of the deployment must hold, by fingerprint (0013; src/deployment/deployment-keys.ts). */
export interface DeploymentKeysTable {
  kind: DeploymentKeyKind;
  /** base64url SHA-256: of the labelled secret key, or of the public key's RFC 7638 members (its `kid`). */
  fingerprint: string;
  /** transparency-log only: the origin its checkpoints name, fixed by the first `serve`/`worker` start. */
  log_origin: string | null;
  recorded_at: string;
}

declare module '../db/tables.js' {
  interface Tables {
    deployment_keys: DeploymentKeysTable;
  }
}
