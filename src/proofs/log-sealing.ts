import type { Tx } from '../db/database.js';
import type { SealedStatement, UnsignedStatementKey } from './repository.js';
import type { SignedStatement } from './statement-signing.js';

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
  /** In the seal transaction: marks statements sealed under the checkpoint of `treeSize`, with their signatures and leaf indexes. */
  markSealed(tx: Tx, statements: SealedStatement[], treeSize: number, sealedAt: string): Promise<void>;
  /** After the seal transaction: these statements are sealed (here or by another process). */
  sealed(proofIds: string[]): void;
}

export function toSign(rows: Array<{ id: string; statement_json: string }>): Array<{ id: string; statementJson: string }> {
  return rows.map((row) => ({ id: row.id, statementJson: row.statement_json }));
}
