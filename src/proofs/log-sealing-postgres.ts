import { sql } from 'kysely';
import { toSign, type LogSealing } from './log-sealing.js';
import { markSealedInOneStatement, unsignedStatements } from './repository.js';
import type { StatementSigner } from './statement-signer.js';

// @NOTE: this advisory-lock key, paired with the schema's hash, makes the PostgreSQL sequencer a
// single writer across processes; deployments in other schemas of the same database do not contend.
const SEQUENCER_LOCK_KEY = 0x776f_7066; // "wopf"

/**
 * On PostgreSQL every process runs a sequencer, and the one holding the advisory lock seals; only it
 * signs, inside its seal transaction, rather than every process signing every statement ahead.
 */
export function postgresSigningInSeal(signer: StatementSigner): LogSealing {
  return {
    signAhead: async () => {},
    beforeSeal: async () => {},
    async claim(tx) {
      const { rows } = await sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(${SEQUENCER_LOCK_KEY}::integer, hashtext(current_schema())) AS locked`.execute(tx);
      return Boolean(rows[0]?.locked);
    },
    async unsignedStatements(tx, limit) {
      const rows = await unsignedStatements(tx, limit);
      return { statements: rows, signatures: await signer.sign(toSign(rows)) };
    },
    markSealed: markSealedInOneStatement,
    sealed: () => {},
  };
}
