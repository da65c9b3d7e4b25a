import type { VersionedMigration } from '../migrate.js';
import { foundation } from './0001-foundation.js';
import { proofs } from './0004-proofs.js';

/** Every migration, in order. Landed migrations are never edited: add a new one. */
export const migrations: VersionedMigration[] = [foundation, proofs];
