import { sql } from 'kysely';
import type { VersionedMigration } from '../migrate.js';

/**
 * PostgreSQL: a sealed proof statement keeps its signature in its own row. The JWS of a typical
 * completion is ~1.9 KB of base64url, which took the row past PostgreSQL's default 2 KB TOAST
 * threshold: every seal then tried to compress it (pglz, which gains nothing on base64url) and wrote
 * it out of line, a row and an index entry in the TOAST table besides the statement's own, and every
 * proof read fetched it back from there. Together 2–3 % of PostgreSQL's CPU per sealed completion,
 * measured (perf, bench/analysis.md, session 22). With the threshold at the page's limit, rows of up
 * to ~8 KB stay whole, uncompressed; longer ones (long histories, many photos) are still toasted.
 * Only rows written from now on are affected. SQLite has no TOAST: nothing to do there.
 */
export const inlineProofSignatures: VersionedMigration = {
  name: '0018-inline-proof-signatures',
  async up(db, dialect) {
    if (dialect !== 'postgres') return;
    await sql`ALTER TABLE proof_statements SET (toast_tuple_target = 8160)`.execute(db);
  },
  async down(db, dialect) {
    if (dialect !== 'postgres') return;
    await sql`ALTER TABLE proof_statements RESET (toast_tuple_target)`.execute(db);
  },
};
