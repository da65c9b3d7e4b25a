import { sql } from 'kysely';
import type { Database, Executor, Tx } from '../db/database.js';
import type { TlogNodesTable } from '../db/tables.js';
import { emitEvents } from '../events/outbox.js';
import { isoNow, type Clock } from '../clock.js';
import { formatCheckpointBody } from './checkpoint.js';
import { fromHex, toBase64, toHex, utf8 } from './encoding.js';
import type { ProofKeys } from './keys.js';
import { sha256Sync } from './keys.js';
import { consistencyProof, inclusionProof, leafHash, nodeHash, rangeHash, recordSubtreeReads, type Bytes, type SubtreeSource } from './merkle.js';
import {
  checkpointAt,
  hasStatementsToSeal,
  insertCheckpoint,
  insertLeaves,
  insertNodes,
  latestCheckpoint,
  markSealed,
  pendingStatements,
  readSubtrees,
  unsignedStatementKeys,
  unsignedStatements,
  type SealedStatement,
  type UnsignedStatementKey,
} from './repository.js';
import type { StatementSigner } from './statement-signer.js';
import type { SignedStatement } from './statement-signing.js';

/** Largest batch one seal takes; the rest waits for the next tick (keeps one transaction bounded). */
const MAX_BATCH = 10_000;
/** Statements sent to the signing thread in one message. */
const SIGNING_CHUNK = 250;
/** Signatures kept ahead of sealing at most (~4.5 KB each): bounds memory while sealing lags. */
const MAX_SIGNED_AHEAD = 4_000;
// @NOTE: this advisory-lock key, paired with the schema's hash, makes the PostgreSQL sequencer a
// single writer across processes; deployments in other schemas of the same database do not contend.
const SEQUENCER_LOCK_KEY = 0x776f_7066; // "wopf"

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
 * `tlog_checkpoints`. Only `sealPending` appends, one transaction per batch.
 */
export class TransparencyLog {
  constructor(
    private readonly database: Database,
    private readonly keys: ProofKeys,
    readonly signer: StatementSigner,
    private readonly clock: Clock,
    private readonly proofUrl: (proofId: string) => string,
  ) {}

  /** Signatures made by `signAhead`, by proof id, until their statements are sealed. */
  private readonly signedAhead = new Map<string, SignedStatement>();
  /** The last statement id `signAhead` has read. */
  private signCursor = '';
  private signingAhead: Promise<void> | undefined;

  get origin(): string {
    return this.keys.log.name;
  }

  /**
   * On SQLite, signs the statements completions stored since the last call, in chunks, and keeps
   * the signatures until `sealPending` appends them. The sequencer calls it between seals, so that
   * at a seal the batch is already signed: the signing thread's ~0.1 ms per statement no longer
   * adds to the time from completion to `record.proof_delivered`. A no-op on PostgreSQL, where only
   * the sequencer that holds the lock signs (in its seal transaction), not every worker.
   */
  async signAhead(): Promise<void> {
    if (this.database.dialect !== 'sqlite') return;
    this.signingAhead ??= this.signNewStatements().finally(() => {
      this.signingAhead = undefined;
    });
    await this.signingAhead;
  }

  private async signNewStatements(): Promise<void> {
    while (this.signedAhead.size < MAX_SIGNED_AHEAD) {
      const rows = await unsignedStatements(this.database.db, SIGNING_CHUNK, this.signCursor);
      if (rows.length === 0) return;
      this.signCursor = rows.at(-1)!.id;
      const fresh = rows.filter((row) => !this.signedAhead.has(row.id));
      for (const [id, signature] of await this.signer.sign(toSign(fresh))) this.signedAhead.set(id, signature);
    }
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
    // On SQLite statements are signed before the transaction: it holds the one write connection from
    // BEGIN to COMMIT, and every request's write would wait while a batch is signed.
    if (this.database.dialect === 'sqlite') {
      await this.signAhead();
      // Ids increase in commit order within one process only: one stored by another process behind
      // the point signing had reached is found here, and signing starts over (skipping the signed).
      const waiting = await unsignedStatementKeys(this.database.db, MAX_BATCH);
      if (waiting.some((row) => !this.signedAhead.has(row.id))) {
        this.signCursor = '';
        await this.signAhead();
      }
    }
    const result = await this.database.db.transaction().execute(async (tx) => {
      if (this.database.dialect === 'postgres') {
        const { rows } = await sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(${SEQUENCER_LOCK_KEY}::integer, hashtext(current_schema())) AS locked`.execute(tx);
        if (!rows[0]?.locked) return undefined;
      }
      const signedEarlier = await pendingStatements(tx, MAX_BATCH);
      let unsigned: UnsignedStatementKey[];
      let signatures: Map<string, SignedStatement>;
      if (this.database.dialect === 'sqlite') {
        unsigned = await unsignedStatementKeys(tx, MAX_BATCH - signedEarlier.length);
        signatures = this.signedAhead;
        // Signatures of statements no longer unsigned (sealed by another process) are dropped.
        if (unsigned.length < MAX_BATCH - signedEarlier.length && signatures.size > unsigned.length) {
          const stillUnsigned = new Set(unsigned.map((row) => row.id));
          for (const id of signatures.keys()) if (!stillUnsigned.has(id)) signatures.delete(id);
        }
      } else {
        const rows = await unsignedStatements(tx, MAX_BATCH - signedEarlier.length);
        unsigned = rows;
        signatures = await this.signer.sign(toSign(rows));
      }
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
      const newSize = oldSize + batch.length;
      const leaves = batch.map((statement) => leafHash(sha256Sync, utf8(statement.jws)));

      const known = await this.readHashes(tx, frontier(oldSize));
      for (let i = 0; i < leaves.length; i++) known.set(`0:${oldSize + i}`, leaves[i]!);
      const nodes: TlogNodesTable[] = [];
      for (let level = 1; newSize >> level > 0; level++) {
        for (let index = oldSize >> level; index < newSize >> level; index++) {
          const hash = nodeHash(sha256Sync, known.get(`${level - 1}:${2 * index}`)!, known.get(`${level - 1}:${2 * index + 1}`)!);
          known.set(`${level}:${index}`, hash);
          nodes.push({ level, node_index: index, hash: toHex(hash) });
        }
      }
      const root = rangeHash(sha256Sync, mapSource(known), 0, newSize);

      const now = isoNow(this.clock);
      const note = this.keys.signCheckpoint(formatCheckpointBody({ origin: this.origin, treeSize: newSize, rootHash: root }));
      await insertLeaves(tx, batch.map((statement, i) => ({ leaf_index: oldSize + i, proof_id: statement.row.id, leaf_hash: toHex(leaves[i]!) })));
      await insertNodes(tx, nodes);
      // The primary key on tree_size refuses a second, different checkpoint of the same size.
      await insertCheckpoint(tx, { tree_size: newSize, root_hash: toHex(root), note, created_at: now });
      await markSealed(
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
    if (result) for (const id of result.proofIds) this.signedAhead.delete(id);
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

function toSign(rows: Array<{ id: string; statement_json: string }>): Array<{ id: string; statementJson: string }> {
  return rows.map((row) => ({ id: row.id, statementJson: row.statement_json }));
}

/**
 * The perfect subtrees of a tree of `size` leaves that new leaves will pair with: at each level, the
 * last complete node when it has no right sibling yet. These are all a batch append needs to read.
 */
export function frontier(size: number): Array<{ level: number; index: number }> {
  const keys: Array<{ level: number; index: number }> = [];
  for (let level = 0; size >> level > 0; level++) {
    const count = size >> level;
    if (count % 2 === 1) keys.push({ level, index: count - 1 });
  }
  return keys;
}
