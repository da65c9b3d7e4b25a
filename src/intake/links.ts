import { hash, randomBytes } from 'node:crypto';
import type { Db } from '../db/database.js';
import type { Page } from '../db/page.js';
import type { InTransaction } from '../idempotency/in-transaction.js';
import { assertVersion } from '../db/versioned-rows.js';
import { digestsEqual } from '../keys/api-key-secret.js';
import { errors } from '../errors.js';
import { newId } from '../ids.js';
import { isoNow, type Clock } from '../clock.js';
import type { Principal } from '../principal.js';
import { checkRecordReferences } from '../records/references.js';
import type { IntakeLinksTable } from '../requests/tables.js';
import { findIntakeLink, findIntakeLinkByTokenHash, listIntakeLinks, toIntakeLink } from './repository.js';
import type { CreatedIntakeLink, CreateIntakeLinkInput, IntakeLink, UpdateIntakeLinkInput } from './schemas.js';

/** Intake tokens are `wit_` and 43 base64url characters (256 random bits): never the shape of an API key (`wo_…`). */
const TOKEN_PATTERN = /^wit_[A-Za-z0-9_-]{43}$/;
export const INTAKE_PREFIX = '/intake';

function newToken(): string {
  return `wit_${randomBytes(32).toString('base64url')}`;
}

function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/**
 * Intake links: public forms that file work requests for people without an API key, each pinned to
 * a location, an asset and a category.
 * @NOTE: the token is shown once (creation, rotation) and stored only as its SHA-256, compared in
 * constant time, and looked up in the database on every request (no process remembers it): a
 * rotation or a disable stops the old form at once on every process.
 */
export class IntakeLinkService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly publicUrl: string,
  ) {}

  async create(principal: Principal, input: CreateIntakeLinkInput, within?: InTransaction<CreatedIntakeLink>): Promise<CreatedIntakeLink> {
    const now = isoNow(this.clock);
    const token = newToken();
    return this.db.transaction().execute(async (tx) => {
      await this.checkReferences(tx, principal.orgId, input);
      const row: IntakeLinksTable = {
        id: newId('intakeLink'),
        org_id: principal.orgId,
        name: input.name.trim(),
        location_id: input.locationId ?? null,
        asset_id: input.assetId ?? null,
        category_id: input.categoryId ?? null,
        enabled: input.enabled === false ? 0 : 1,
        token_hash: hashToken(token),
        created_at: now,
        updated_at: now,
        version: 1,
      };
      await tx.insertInto('intake_links').values(row).execute();
      const created = this.withToken(row, token);
      await within?.(tx, created);
      return created;
    });
  }

  async get(orgId: string, id: string): Promise<IntakeLink> {
    const row = await findIntakeLink(this.db, orgId, id);
    if (!row) throw errors.notFound(`Intake link "${id}"`);
    return toIntakeLink(row);
  }

  async list(orgId: string, page: Page): Promise<{ intakeLinks: IntakeLink[]; total: number }> {
    const { rows, total } = await listIntakeLinks(this.db, orgId, page);
    return { intakeLinks: rows.map(toIntakeLink), total };
  }

  async update(principal: Principal, id: string, input: UpdateIntakeLinkInput, acceptedVersions?: number[]): Promise<IntakeLink> {
    return this.db.transaction().execute(async (tx) => {
      const current = await findIntakeLink(tx, principal.orgId, id);
      if (!current) throw errors.notFound(`Intake link "${id}"`);
      assertVersion(acceptedVersions, current.version, 'The intake link');
      await this.checkReferences(tx, principal.orgId, input);
      const next: IntakeLinksTable = {
        ...current,
        ...(input.name !== undefined ? { name: input.name.trim() } : {}),
        ...(input.locationId !== undefined ? { location_id: input.locationId } : {}),
        ...(input.assetId !== undefined ? { asset_id: input.assetId } : {}),
        ...(input.categoryId !== undefined ? { category_id: input.categoryId } : {}),
        ...(input.enabled !== undefined ? { enabled: input.enabled ? 1 : 0 } : {}),
        updated_at: isoNow(this.clock),
        version: current.version + 1,
      };
      await this.save(tx, current, next);
      return toIntakeLink(next);
    });
  }

  /** A new token: the old form, its QR code and its URL are a 404 from now on. */
  async rotate(principal: Principal, id: string, acceptedVersions?: number[]): Promise<CreatedIntakeLink> {
    const token = newToken();
    return this.db.transaction().execute(async (tx) => {
      const current = await findIntakeLink(tx, principal.orgId, id);
      if (!current) throw errors.notFound(`Intake link "${id}"`);
      assertVersion(acceptedVersions, current.version, 'The intake link');
      const next: IntakeLinksTable = { ...current, token_hash: hashToken(token), updated_at: isoNow(this.clock), version: current.version + 1 };
      await this.save(tx, current, next);
      return this.withToken(next, token);
    });
  }

  /** Deletes a link no request came through; one that filed requests is kept for their history (409 `resource_in_use`: disable it). */
  async delete(principal: Principal, id: string, acceptedVersions?: number[]): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      const current = await findIntakeLink(tx, principal.orgId, id);
      if (!current) throw errors.notFound(`Intake link "${id}"`);
      assertVersion(acceptedVersions, current.version, 'The intake link');
      const used = await tx.selectFrom('work_requests').select('id').where('org_id', '=', principal.orgId).where('intake_link_id', '=', id).limit(1).executeTakeFirst();
      if (used) throw errors.inUse(`Intake link "${id}" filed work requests, which keep naming it: disable it instead (PATCH {"enabled": false}).`);
      await tx.deleteFrom('intake_links').where('id', '=', id).where('org_id', '=', principal.orgId).execute();
    });
  }

  /** The enabled link a presented token opens, or undefined for any reason at all (malformed, unknown, rotated, disabled). */
  async open(token: string): Promise<IntakeLinksTable | undefined> {
    if (!TOKEN_PATTERN.test(token)) return undefined;
    const presented = hashToken(token);
    const link = await findIntakeLinkByTokenHash(this.db, presented);
    if (!link || !digestsEqual(link.token_hash, presented) || !link.enabled) return undefined;
    return link;
  }

  /** The public form's URL for a token. */
  formUrl(token: string): string {
    return `${this.publicUrl}${INTAKE_PREFIX}/${token}`;
  }

  private withToken(row: IntakeLinksTable, token: string): CreatedIntakeLink {
    const url = this.formUrl(token);
    return { ...toIntakeLink(row), token, url, qrUrl: `${url}/qr.svg` };
  }

  private async checkReferences(tx: Parameters<typeof checkRecordReferences>[0], orgId: string, input: { locationId?: string | null; assetId?: string | null; categoryId?: string | null }): Promise<void> {
    const problems = await checkRecordReferences(tx, orgId, {
      ...(input.categoryId ? { categoryId: input.categoryId } : {}),
      ...(input.assetId ? { assetId: input.assetId } : {}),
      ...(input.locationId ? { locationId: input.locationId } : {}),
    });
    if (problems.length > 0) throw errors.unprocessable('The intake link refers to something that does not exist in your organization.', problems);
  }

  private async save(tx: Parameters<typeof checkRecordReferences>[0], current: IntakeLinksTable, next: IntakeLinksTable): Promise<void> {
    const result = await tx.updateTable('intake_links').set(next).where('id', '=', current.id).where('version', '=', current.version).executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) throw errors.conflict(`Intake link "${current.id}" changed at the same moment; fetch it again and retry.`);
  }
}
