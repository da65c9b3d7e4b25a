import type { Db } from '../db/database.js';
import type { InTransaction } from '../idempotency/in-transaction.js';
import type { Page } from '../db/page.js';
import { errors } from '../errors.js';
import { emitEvent } from '../events/outbox.js';
import type { Principal } from '../keys/api-keys.js';
import { newId } from '../ids.js';
import { isoNow, type Clock } from '../clock.js';
import { findRecord, insertHistory } from '../records/repository.js';
import { apiKeyName, insertComment, listComments, toComment } from './repository.js';
import type { Comment, CreateCommentInput } from './schemas.js';

/**
 * Comments on work orders. A comment is written once and kept as written: there is no edit or delete,
 * so the history (where each comment is also an entry) and a completion proof that signed it never
 * disagree with the comment list.
 */
export class CommentService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /** `within` runs as the last step of the transaction (see `InTransaction`). */
  async add(principal: Principal, recordId: string, input: CreateCommentInput, within?: InTransaction<Comment>): Promise<Comment> {
    return this.db.transaction().execute(async (tx) => {
      if (!(await findRecord(tx, principal.orgId, recordId))) throw errors.notFound(`Work order "${recordId}"`);
      const now = isoNow(this.clock);
      const row = {
        id: newId('comment'),
        org_id: principal.orgId,
        record_id: recordId,
        body: input.body,
        author_key_id: principal.keyId,
        // The request's key was just authenticated, so its row exists; the id would stand in otherwise.
        author_name: principal.actor.name ?? (await apiKeyName(tx, principal.orgId, principal.keyId)) ?? principal.keyId,
        created_at: now,
      };
      await insertComment(tx, row);
      const comment = toComment(row);
      await insertHistory(tx, {
        id: newId('recordEvent'),
        org_id: principal.orgId,
        record_id: recordId,
        action: 'commented',
        from_status: null,
        to_status: null,
        actor_key_id: principal.keyId,
        actor_name: principal.actor.name ?? null,
        data: JSON.stringify({ commentId: comment.id, body: comment.body }),
        created_at: now,
      });
      await emitEvent(tx, { orgId: principal.orgId, type: 'record.comment_added', payload: { recordId, comment }, occurredAt: now });
      await within?.(tx, comment);
      return comment;
    });
  }

  async list(orgId: string, recordId: string, page: Page): Promise<{ comments: Comment[]; total: number }> {
    if (!(await findRecord(this.db, orgId, recordId))) throw errors.notFound(`Work order "${recordId}"`);
    const { rows, total } = await listComments(this.db, orgId, recordId, page);
    return { comments: rows.map(toComment), total };
  }
}
