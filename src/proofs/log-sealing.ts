import { sql } from 'kysely';
import type { Database, Db, Tx } from '../db/database.js';
import { unsignedStatementKeys, unsignedStatements, type UnsignedStatementKey } from './repository.js';
import type { StatementSigner } from './statement-signer.js';
import type { SignedStatement } from './statement-signing.js';

/** Statements sent to the signing thread in one message. */
const SIGNING_CHUNK = 250;
/** Signatures kept ahead of sealing at most (~4.5 KB each): bounds memory while sealing lags. */
const MAX_SIGNED_AHEAD = 4_000;
// @NOTE: this advisory-lock key, paired with the schema's hash, makes the PostgreSQL sequencer a
// single writer across processes; deployments in other schemas of the same database do not contend.
const SEQUENCER_LOCK_KEY = 0x776f_7066; // "wopf"

/**
 * Who may seal the transparency log, and when the statements a seal appends are signed: the part of
 * sealing that differs between the dialects (TransparencyLog.sealPending runs the rest).
 */
export interface LogSealing {
  /** Signs statements stored since the last call ahead of their seal, where signing happens ahead. */
  signAhead(): Promise<void>;
  /** Before the seal transaction opens: have the next `limit` waiting statements signed, where signing happens ahead. */
  beforeSeal(limit: number): Promise<void>;
  /** First thing in the seal transaction: false when another process is sealing. */
  claim(tx: Tx): Promise<boolean>;
  /**
   * In the seal transaction: up to `limit` statements waiting to be signed and sealed, oldest first,
   * with the signatures made for them (one left without a signature waits for the next seal).
   */
  unsignedStatements(tx: Tx, limit: number): Promise<{ statements: UnsignedStatementKey[]; signatures: Map<string, SignedStatement> }>;
  /** After the seal transaction: these statements are sealed (here or by another process). */
  sealed(proofIds: string[]): void;
}

export function logSealing(database: Database, signer: StatementSigner): LogSealing {
  return database.dialect === 'sqlite' ? new SqliteSigningAhead(database.db, signer) : postgresSigningInSeal(signer);
}

/**
 * On SQLite statements are signed before the seal transaction: it holds the one write connection from
 * BEGIN to COMMIT, and every request's write would wait while a batch is signed. The sequencer signs
 * between seals (signAhead), so that at a seal the batch is already signed and the signing thread's
 * time no longer adds to the time from completion to `record.proof_delivered`. One process seals at
 * a time anyway: SQLite has one writer.
 */
class SqliteSigningAhead implements LogSealing {
  /** Signatures made by `signAhead`, by proof id, until their statements are sealed. */
  private readonly signedAhead = new Map<string, SignedStatement>();
  /** The last statement id `signAhead` has read. */
  private signCursor = '';
  private signingAhead: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly signer: StatementSigner,
  ) {}

  async signAhead(): Promise<void> {
    this.signingAhead ??= this.signNewStatements().finally(() => {
      this.signingAhead = undefined;
    });
    await this.signingAhead;
  }

  private async signNewStatements(): Promise<void> {
    while (this.signedAhead.size < MAX_SIGNED_AHEAD) {
      const rows = await unsignedStatements(this.db, SIGNING_CHUNK, this.signCursor);
      if (rows.length === 0) return;
      this.signCursor = rows.at(-1)!.id;
      const fresh = rows.filter((row) => !this.signedAhead.has(row.id));
      for (const [id, signature] of await this.signer.sign(toSign(fresh))) this.signedAhead.set(id, signature);
    }
  }

  async beforeSeal(limit: number): Promise<void> {
    await this.signAhead();
    // Ids increase in commit order within one process only: one stored by another process behind
    // the point signing had reached is found here, and signing starts over (skipping the signed).
    const waiting = await unsignedStatementKeys(this.db, limit);
    if (waiting.some((row) => !this.signedAhead.has(row.id))) {
      this.signCursor = '';
      await this.signAhead();
    }
  }

  async claim(): Promise<boolean> {
    return true;
  }

  async unsignedStatements(tx: Tx, limit: number): Promise<{ statements: UnsignedStatementKey[]; signatures: Map<string, SignedStatement> }> {
    const statements = await unsignedStatementKeys(tx, limit);
    const signatures = this.signedAhead;
    // Signatures of statements no longer unsigned (sealed by another process) are dropped.
    if (statements.length < limit && signatures.size > statements.length) {
      const stillUnsigned = new Set(statements.map((row) => row.id));
      for (const id of signatures.keys()) if (!stillUnsigned.has(id)) signatures.delete(id);
    }
    return { statements, signatures };
  }

  sealed(proofIds: string[]): void {
    for (const id of proofIds) this.signedAhead.delete(id);
  }
}

/**
 * On PostgreSQL every process runs a sequencer, and the one holding the advisory lock seals; only it
 * signs, inside its seal transaction, rather than every process signing every statement ahead.
 */
function postgresSigningInSeal(signer: StatementSigner): LogSealing {
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
    sealed: () => {},
  };
}

function toSign(rows: Array<{ id: string; statement_json: string }>): Array<{ id: string; statementJson: string }> {
  return rows.map((row) => ({ id: row.id, statementJson: row.statement_json }));
}
