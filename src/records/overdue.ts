import type { Db } from '../db/database.js';
import { outboxRow } from '../events/outbox.js';
import { isoNow, type Clock } from '../clock.js';

/** Work orders one turn announces; a backlog (after downtime) is worked through a batch per transaction. */
const OVERDUE_BATCH = 500;

/**
 * Emits `record.overdue {recordId, dueAt}` once per `dueAt` value for each open work order past it.
 * Exactly once whatever number of workers run: the announcement is a conditional update of the work
 * order's `overdue_for` in the event's own transaction, and only the update that changed it emits.
 * The scan reads the partial index records_overdue_watch (migration 0020) with the same predicate,
 * so announced and finished work orders cost it nothing.
 */
export async function announceOverdue(db: Db, clock: Clock): Promise<number> {
  const now = isoNow(clock);
  let announced = 0;
  for (;;) {
    const batch = await db.transaction().execute(async (tx) => {
      const due = await tx
        .selectFrom('records')
        .select(['id', 'org_id', 'due_at'])
        .where('due_at', 'is not', null)
        .where('completed_at', 'is', null)
        .where('closed_at', 'is', null)
        .where('cancelled_at', 'is', null)
        .where((eb) => eb.or([eb('overdue_for', 'is', null), eb('overdue_for', '<>', eb.ref('due_at'))]))
        .where('due_at', '<', now)
        .orderBy('due_at')
        .limit(OVERDUE_BATCH)
        .execute();
      let count = 0;
      for (const row of due) {
        const marked = await tx
          .updateTable('records')
          .set({ overdue_for: row.due_at })
          .where('id', '=', row.id)
          .where('due_at', '=', row.due_at)
          .where((eb) => eb.or([eb('overdue_for', 'is', null), eb('overdue_for', '<>', eb.ref('due_at'))]))
          .executeTakeFirst();
        if (Number(marked.numUpdatedRows) !== 1) continue;
        await tx.insertInto('outbox_events').values(outboxRow({ orgId: row.org_id, type: 'record.overdue', payload: { recordId: row.id, dueAt: row.due_at }, occurredAt: now })).execute();
        count++;
      }
      return { seen: due.length, count };
    });
    announced += batch.count;
    if (batch.seen < OVERDUE_BATCH) return announced;
  }
}
