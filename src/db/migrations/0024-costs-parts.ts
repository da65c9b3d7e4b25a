import { sql } from 'kysely';
import type { VersionedMigration } from '../migrate.js';
import { addColumn } from './add-column.js';

/**
 * Time, parts and costs: parts with stock per location and its append-only ledger, and every cost
 * line of a work order (labor, parts, other costs) in one table, which the ERP pages and posts.
 *
 * Amounts are whole minor units (bigint) with their currency; quantities whole thousandths (bigint):
 * exact on both databases, never a float. The work order keeps its totals (`costs`, JSON of Money,
 * null before its first line, and `labor_minutes`), written with each line in its transaction, so
 * reading a work order costs nothing more. Both columns carry a constant default or none: adding
 * them rewrites no row, and a release without them keeps inserting rows that get the default.
 */
export const costsAndParts: VersionedMigration = {
  name: '0024-costs-parts',
  async up(db, dialect) {
    await addColumn(db, dialect, 'records', 'costs', 'text');
    await addColumn(db, dialect, 'records', 'labor_minutes', 'integer NOT NULL DEFAULT 0');

    await sql`
      CREATE TABLE IF NOT EXISTS parts (
        id text PRIMARY KEY,
        org_id text NOT NULL REFERENCES organizations (id),
        sku text NOT NULL,
        name text NOT NULL,
        unit text NOT NULL,
        unit_cost_minor bigint NOT NULL,
        currency text NOT NULL,
        reorder_point_milli bigint,
        active integer NOT NULL,
        created_at text NOT NULL,
        updated_at text NOT NULL,
        version integer NOT NULL
      )`.execute(db);
    // sku is unique in the organization (409 already_exists), and GET /parts?sku= finds it
    await sql`CREATE UNIQUE INDEX IF NOT EXISTS parts_org_sku ON parts (org_id, sku)`.execute(db);
    // the list, newest first
    await sql`CREATE INDEX IF NOT EXISTS parts_org ON parts (org_id, created_at, id)`.execute(db);
    // its incremental sync (updatedAfter)
    await sql`CREATE INDEX IF NOT EXISTS parts_org_updated ON parts (org_id, updated_at)`.execute(db);

    // On hand per part and location, kept in step with the ledger in each movement's transaction;
    // `below_reorder` remembers the side of the reorder point, so part.below_reorder_point fires once per crossing.
    await sql`
      CREATE TABLE IF NOT EXISTS part_stock (
        part_id text NOT NULL REFERENCES parts (id),
        location_id text NOT NULL,
        org_id text NOT NULL,
        on_hand_milli bigint NOT NULL,
        below_reorder integer NOT NULL,
        updated_at text NOT NULL,
        PRIMARY KEY (part_id, location_id),
        CHECK (on_hand_milli >= 0)
      )`.execute(db);

    // The ledger: rows are only ever inserted.
    await sql`
      CREATE TABLE IF NOT EXISTS stock_movements (
        id text PRIMARY KEY,
        org_id text NOT NULL,
        part_id text NOT NULL REFERENCES parts (id),
        type text NOT NULL,
        location_id text NOT NULL,
        to_location_id text,
        quantity_milli bigint NOT NULL,
        unit_cost_minor bigint NOT NULL,
        currency text NOT NULL,
        record_id text,
        cost_line_id text,
        note text,
        created_at text NOT NULL
      )`.execute(db);
    // a part's ledger, oldest first (GET /parts/{id}/movements)
    await sql`CREATE INDEX IF NOT EXISTS stock_movements_part ON stock_movements (part_id, id)`.execute(db);

    // Every cost line of a work order: kind labor (lab_), part (pln_) or other (cst_), the columns of
    // the other kinds null. `posted` is 0 or 1 (ERP handshake); a posted line is never updated again.
    await sql`
      CREATE TABLE IF NOT EXISTS cost_lines (
        id text PRIMARY KEY,
        org_id text NOT NULL,
        record_id text NOT NULL,
        kind text NOT NULL,
        description text NOT NULL,
        amount_minor bigint NOT NULL,
        currency text NOT NULL,
        reverses_id text,
        posted integer NOT NULL,
        posted_at text,
        erp_document_id text,
        person_id text,
        minutes integer,
        started_at text,
        ended_at text,
        rate_minor bigint,
        labor_category text,
        note text,
        part_id text,
        location_id text,
        quantity_milli bigint,
        unit_cost_minor bigint,
        movement_id text,
        vendor_id text,
        invoice_ref text,
        attachment_id text,
        created_at text NOT NULL,
        updated_at text NOT NULL
      )`.execute(db);
    // a work order's lines of one kind, oldest first (GET /records/{id}/labor|parts|costs), and its totals' aggregate
    await sql`CREATE INDEX IF NOT EXISTS cost_lines_record ON cost_lines (record_id, kind, id)`.execute(db);
    // GET /cost-lines?posted=false&updatedAfter=: the ERP's page, oldest change first, and its total
    await sql`CREATE INDEX IF NOT EXISTS cost_lines_org_posted ON cost_lines (org_id, posted, updated_at, id)`.execute(db);
    // A line is reversed at most once: the second reversal of a line, even a concurrent one, is refused here
    await sql`CREATE UNIQUE INDEX IF NOT EXISTS cost_lines_reverses ON cost_lines (reverses_id)`.execute(db);
    // GET /cost-lines and ?updatedAfter= without `posted`
    await sql`CREATE INDEX IF NOT EXISTS cost_lines_org_updated ON cost_lines (org_id, updated_at, id)`.execute(db);
  },
};
