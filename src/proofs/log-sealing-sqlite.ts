import type { Db, Tx } from '../db/database.js';
import { toSign, type LogSealing } from './log-sealing.js';
import { markSealedRowByRow, unsignedStatementKeys, unsignedStatements, type SealedStatement, type UnsignedStatementKey } from './repository.js';
import type { StatementSigner } from './statement-signer.js';
import type { SignedStatement } from './statement-signing.js';

/** Statements sent to the signing thread in one message. */
const SIGNING_CHUNK = 250;
/** Signatures kept ahead of sealing at most (~4.5 KB each): bounds memory while sealing lags. */
const MAX_SIGNED_AHEAD = 4_000;

/**
 * On SQLite statements are signed before the seal transaction: it holds the one write connection from
 * BEGIN to COMMIT, and every request's write would wait while a batch is signed. The sequencer signs
 * between seals (signAhead), so that at a seal the batch is already signed and the signing thread's
 * time no longer adds to the time from completion to `record.proof_delivered`. One process seals at
 * a time anyway: SQLite has one writer.
 */
export class SqliteSigningAhead implements LogSealing {
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

  markSealed(tx: Tx, statements: SealedStatement[], treeSize: number, sealedAt: string): Promise<void> {
    return markSealedRowByRow(tx, statements, treeSize, sealedAt);
  }

  sealed(proofIds: string[]): void {
    for (const id of proofIds) this.signedAhead.delete(id);
  }
}
