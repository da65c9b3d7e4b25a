import type { HistoryEntry, RecordHistoryEntry } from './schemas.js';

/**
 * A history entry in its one public shape: what `GET /records/{id}/history` answers and what a
 * completion statement signs (src/proofs/statement.ts).
 *
 * @NOTE: type imports only. The proof verifier (bundled into the SDK and the /verify page) reaches
 * this file through statement.ts and must not carry TypeBox.
 */
export function historyEntryOf(entry: RecordHistoryEntry): HistoryEntry {
  return {
    action: entry.action,
    from: entry.fromStatus,
    to: entry.toStatus,
    actor: entry.actor ? `${entry.actor.type}:${entry.actor.id}` : null,
    ...(entry.actor?.name ? { actorName: entry.actor.name } : {}),
    at: entry.occurredAt,
    data: entry.data,
  };
}
