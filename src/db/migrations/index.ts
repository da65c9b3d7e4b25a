import type { VersionedMigration } from '../migrate.js';
import { foundation } from './0001-foundation.js';
import { webhooks } from './0003-webhooks.js';

/** Every migration, in order. Landed migrations are never edited: add a new one. */
export const migrations: VersionedMigration[] = [foundation, webhooks];
