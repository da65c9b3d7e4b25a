import type { VersionedMigration } from '../migrate.js';
import { foundation } from './0001-foundation.js';
import { assetsAndLocations } from './0002-assets-locations.js';
import { webhooks } from './0003-webhooks.js';
import { proofs } from './0004-proofs.js';
import { admin } from './0005-admin.js';
import { createPathIndexes } from './0007-create-path-indexes.js';
import { outboxCursor } from './0008-outbox-cursor.js';
import { statusListMoves } from './0009-status-list-moves.js';
import { idempotencyValueFingerprint } from './0010-idempotency-value-fingerprint.js';
import { unsignedStatements } from './0011-unsigned-statements.js';
import { recordCountDeltas } from './0012-record-count-deltas.js';
import { deploymentKeys } from './0013-deployment-keys.js';
import { eventFeed } from './0014-event-feed.js';
import { workOrderActivity } from './0015-work-order-activity.js';
import { historyWithoutForeignKey } from './0016-history-without-foreign-key.js';
import { leanOutboxIndexes } from './0017-lean-outbox-indexes.js';
import { inlineProofSignatures } from './0018-inline-proof-signatures.js';
import { meters } from './0019-meters.js';
import { preventiveMaintenance } from './0020-preventive-maintenance.js';
import { people } from './0021-people.js';
import { witnessedCheckpoints } from './0022-witnessed-checkpoints.js';
import { costsAndParts } from './0024-costs-parts.js';
import { checkpointTimestamps } from './0025-checkpoint-timestamps.js';
import { workRequests } from './0027-work-requests.js';

/** Every migration, in order. Landed migrations are never edited: add a new one. */
export const migrations: VersionedMigration[] = [foundation, assetsAndLocations, webhooks, proofs, admin, createPathIndexes, outboxCursor, statusListMoves, idempotencyValueFingerprint, unsignedStatements, recordCountDeltas, deploymentKeys, eventFeed, workOrderActivity, historyWithoutForeignKey, leanOutboxIndexes, inlineProofSignatures, meters, preventiveMaintenance, people, witnessedCheckpoints, costsAndParts, checkpointTimestamps, workRequests];
