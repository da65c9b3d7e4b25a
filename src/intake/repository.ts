import type { Executor } from '../db/database.js';
import type { Page } from '../db/page.js';
import { IN_ORGANIZATION } from '../db/organization-check.js';
import type { IntakeLinksTable } from '../requests/tables.js';
import type { IntakeLink } from './schemas.js';

export function toIntakeLink(row: IntakeLinksTable): IntakeLink {
  return {
    id: row.id,
    name: row.name,
    locationId: row.location_id,
    assetId: row.asset_id,
    categoryId: row.category_id,
    enabled: Boolean(row.enabled),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    version: row.version,
  };
}

export function findIntakeLink(db: Executor, orgId: string, id: string): Promise<IntakeLinksTable | undefined> {
  return db.selectFrom('intake_links').selectAll().where('id', '=', id).where('org_id', IN_ORGANIZATION, orgId).executeTakeFirst();
}

export function findIntakeLinkByTokenHash(db: Executor, tokenHash: string): Promise<IntakeLinksTable | undefined> {
  return db.selectFrom('intake_links').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

export async function listIntakeLinks(db: Executor, orgId: string, page: Page): Promise<{ rows: IntakeLinksTable[]; total: number }> {
  const matching = db.selectFrom('intake_links').where('org_id', '=', orgId);
  const [rows, counted] = await Promise.all([
    matching.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute(),
    matching.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(counted.n) };
}


/** Forgets spent proof-of-work solutions whose challenge has expired: no form can send them again anyway. */
export async function purgeSpentSolutions(db: Executor, now: string): Promise<void> {
  await db.deleteFrom('intake_used_solutions').where('expires_at', '<', now).execute();
}
