import type { Executor } from '../db/database.js';

/** Image attachments of a work order (the job page's photos), oldest first; at most `limit`. */
export async function imagesOfRecord(db: Executor, orgId: string, recordId: string, limit: number): Promise<{ id: string; filename: string; mediaType: string }[]> {
  const rows = await db
    .selectFrom('attachments')
    .select(['id', 'filename', 'media_type'])
    .where('record_id', '=', recordId)
    .where('org_id', '=', orgId)
    .where('state', '=', 'stored')
    .where('media_type', 'like', 'image/%')
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ id: row.id, filename: row.filename, mediaType: row.media_type }));
}

/** The comments written through one access link, oldest first. */
export async function commentsThroughLink(db: Executor, orgId: string, recordId: string, linkId: string): Promise<{ body: string; createdAt: string }[]> {
  const rows = await db
    .selectFrom('record_comments')
    .select(['body', 'created_at'])
    .where('record_id', '=', recordId)
    .where('org_id', '=', orgId)
    .where('author_key_id', '=', linkId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => ({ body: row.body, createdAt: row.created_at }));
}

/** The names of the asset and location a work order is about, for the page (null when none or gone). */
export async function placeNames(db: Executor, orgId: string, assetId: string | null, locationId: string | null): Promise<{ assetName: string | null; locationName: string | null }> {
  const asset = assetId ? await db.selectFrom('assets').select('name').where('id', '=', assetId).where('org_id', '=', orgId).executeTakeFirst() : undefined;
  const location = locationId ? await db.selectFrom('locations').select('name').where('id', '=', locationId).where('org_id', '=', orgId).executeTakeFirst() : undefined;
  return { assetName: asset?.name ?? null, locationName: location?.name ?? null };
}
