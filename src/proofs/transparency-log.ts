import type { Database, Executor, Tx } from '../db/database.js';
import type { TlogNodesTable } from './tables.js';
import { emitEvents } from '../events/outbox.js';
import { isoNow, type Clock } from '../clock.js';
import { formatCheckpointBody } from './checkpoint.js';
import { fromHex, toBase64, toHex, utf8 } from './encoding.js';
import type { ProofKeys } from './keys.js';
import { sha256Sync } from './keys.js';
import type { LogSealing } from './log-sealing.js';
import { appendLeaves, consistencyProof, frontier, inclusionProof, leafHash, recordSubtreeReads, type Bytes, type SubtreeSource } from './merkle.js';
import {
  checkpointAt,
  hasStatementsToSeal,
  insertCheckpoint,
  insertLeaves,
  insertNodes,
  latestCheckpoint,
  pendingStatements,
  readSubtrees,
  type SealedStatement,
} from './repository.js';
import type { StatementSigner } from './statement-signer.js';

/** Largest batch one seal takes; the rest waits for the next tick (keeps one transaction bounded). */
const MAX_BATCH = 10_000;

export interface SealResult {
  treeSize: number;
  sealed: number;
}

/** A source of perfect-subtree hashes already fetched into memory. */
function mapSource(hashes: Map<string, Bytes>): SubtreeSource {
  return {
    perfect(level, index) {
      const hash = hashes.get(`${level}:${index}`);
      if (!hash) throw new Error(`transparency log is missing subtree ${level}:${index}`);
      return hash;
    },
  };
}

/**
 * The append-only RFC 9162 log of completion statements, stored on either dialect:
 * leaves in `tlog_leaves`, every perfect subtree hash in `tlog_nodes`, signed checkpoints in
 * `tlog_checkpoints`. Only `sealPending` appends, one transaction per batch; who may seal and when
 * statements are signed differ per dialect (LogSealing).
 */
export class TransparencyLog {
  constructor(
    private readonly database: Database,
    private readonly keys: ProofKeys,
    readonly signer: StatementSigner,
    /** Who seals and when statements are signed on this database (log-sealing-sqlite.ts, log-sealing-postgres.ts). */
    private readonly sealing: LogSealing,
    private readonly clock: Clock,
    private readonly proofUrl: (proofId: string) => string,
  ) {}

  get origin(): string {
    return this.keys.log.name;
  }

  /**
   * On SQLite, signs the statements completions stored since the last call, in chunks, and keeps
   * the signatures until `sealPending` appends them (see log-sealing.ts). A no-op on PostgreSQL,
   * where only the sequencer that holds the lock signs (in its seal transaction), not every worker.
   */
  async signAhead(): Promise<void> {
    await this.sealing.signAhead();
  }

  /**
   * Appends the statements waiting to be sealed (oldest first) as leaves, signs the checkpoint of
   * the new tree, marks the statements sealed and emits `record.proof_delivered`, all in one
   * transaction: a checkpoint exists exactly when its leaves and nodes do, and the event exists
   * exactly when the bundle can be fetched. Returns undefined when there was nothing to do or
   * another process holds the sequencer lock.
   */
  async sealPending(): Promise<SealResult | undefined> {
    // Most ticks find nothing: a read then, not a write transaction (on SQLite, a group commit that
    // every read of that event-loop turn would wait on).
    if (!(await hasStatementsToSeal(this.database.db))) return undefined;
    await this.sealing.beforeSeal(MAX_BATCH);
    const result = await this.database.db.transaction().execute(async (tx) => {
      if (!(await this.sealing.claim(tx))) return undefined;
      const signedEarlier = await pendingStatements(tx, MAX_BATCH);
      const { statements: unsigned, signatures } = await this.sealing.unsignedStatements(tx, MAX_BATCH - signedEarlier.length);
      const batch = [
        ...signedEarlier.map((row) => ({ row, was: 'pending' as const, jws: row.jws, digest: row.statement_digest })),
        // One not signed yet (or that could not be signed) waits for the next seal.
        ...unsigned.flatMap((row) => {
          const signature = signatures.get(row.id);
          return signature ? [{ row, was: 'unsigned' as const, ...signature }] : [];
        }),
      ];
      if (batch.length === 0) return undefined;
      const oldSize = Number((await latestCheckpoint(tx))?.tree_size ?? 0);
      const leaves = batch.map((statement) => leafHash(sha256Sync, utf8(statement.jws)));
      const tree = appendLeaves(sha256Sync, oldSize, mapSource(await this.readHashes(tx, frontier(oldSize))), leaves);
      const newSize = tree.size;

      const now = isoNow(this.clock);
      const note = this.keys.signCheckpoint(formatCheckpointBody({ origin: this.origin, treeSize: newSize, rootHash: tree.root }));
      await insertLeaves(tx, batch.map((statement, i) => ({ leaf_index: oldSize + i, proof_id: statement.row.id, leaf_hash: toHex(leaves[i]!) })));
      await insertNodes(tx, tree.nodes.map((node): TlogNodesTable => ({ level: node.level, node_index: node.index, hash: toHex(node.hash) })));
      // The primary key on tree_size refuses a second, different checkpoint of the same size.
      await insertCheckpoint(tx, { tree_size: newSize, root_hash: toHex(tree.root), note, created_at: now });
      await this.sealing.markSealed(
        tx,
        batch.map((statement, i): SealedStatement => ({ id: statement.row.id, was: statement.was, jws: statement.jws, digest: statement.digest, leafIndex: oldSize + i })),
        newSize,
        now,
      );
      await emitEvents(
        tx,
        batch.map(({ row }, i) => ({
          orgId: row.org_id,
          type: 'record.proof_delivered' as const,
          payload: { recordId: row.record_id, proofId: row.id, proofUrl: this.proofUrl(row.id), leafIndex: oldSize + i, treeSize: newSize },
          occurredAt: now,
        })),
      );
      return { treeSize: newSize, sealed: batch.length, proofIds: batch.map(({ row }) => row.id) };
    });
    // Sealed now, or by another process: either way their signatures are no longer needed.
    if (result) this.sealing.sealed(result.proofIds);
    return result && { treeSize: result.treeSize, sealed: result.sealed };
  }

  async latestCheckpoint(db: Executor = this.database.db): Promise<{ treeSize: number; note: string } | undefined> {
    const row = await latestCheckpoint(db);
    return row ? { treeSize: Number(row.tree_size), note: row.note } : undefined;
  }

  async checkpointAt(treeSize: number, db: Executor = this.database.db): Promise<string | undefined> {
    return (await checkpointAt(db, treeSize))?.note;
  }

  /** Audit path of `leafIndex` in the tree of `treeSize` leaves (which must exist), base64, bottom-up. */
  async inclusionProof(leafIndex: number, treeSize: number, db: Executor = this.database.db): Promise<string[]> {
    return this.proveFromStore(db, (source) => inclusionProof(sha256Sync, source, leafIndex, treeSize));
  }

  async consistencyProof(first: number, second: number, db: Executor = this.database.db): Promise<string[]> {
    return this.proveFromStore(db, (source) => consistencyProof(sha256Sync, source, first, second));
  }

  async leafHash(leafIndex: number, db: Executor = this.database.db): Promise<string | undefined> {
    const hashes = await readSubtrees(db, [{ level: 0, index: leafIndex }]);
    const hex = hashes.get(`0:${leafIndex}`);
    return hex ? toBase64(fromHex(hex)!) : undefined;
  }

  private async proveFromStore(db: Executor, prove: (source: SubtreeSource) => Bytes[]): Promise<string[]> {
    const known = await this.readHashes(db, recordSubtreeReads(prove));
    return prove(mapSource(known)).map(toBase64);
  }

  private async readHashes(db: Executor | Tx, keys: Array<{ level: number; index: number }>): Promise<Map<string, Bytes>> {
    const hex = await readSubtrees(db, keys);
    return new Map([...hex].map(([key, value]) => [key, fromHex(value)!]));
  }
}
