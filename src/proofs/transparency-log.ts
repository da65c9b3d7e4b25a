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
  hasPendingStatements,
  insertCheckpoint,
  insertLeaves,
  insertNodes,
  latestCheckpoint,
  markSealed,
  pendingStatements,
  readSubtrees,
} from './repository.js';

/** Largest batch one seal takes; the rest waits for the next tick (keeps one transaction bounded). */
const MAX_BATCH = 10_000;
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
    private readonly clock: Clock,
    private readonly proofUrl: (proofId: string) => string,
  ) {}

  get origin(): string {
    return this.keys.log.name;
  }

  /**
   * Appends every pending statement (oldest first) as leaves, signs the checkpoint of the new tree,
   * marks the statements sealed and emits `record.proof_delivered` — all in one transaction, so a
   * checkpoint exists exactly when its leaves and nodes do, and the event exists exactly when the
   * bundle can be fetched. Returns undefined when there was nothing to do or another process holds
   * the sequencer lock.
   */
  async sealPending(): Promise<SealResult | undefined> {
    // Most ticks find nothing: a read then, not a write transaction (on SQLite, a group commit that
    // every read of that event-loop turn would wait on).
    if (!(await hasPendingStatements(this.database.db))) return undefined;
    return this.database.db.transaction().execute(async (tx) => {
      if (this.database.dialect === 'postgres') {
        const { rows } = await sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(${SEQUENCER_LOCK_KEY}::integer, hashtext(current_schema())) AS locked`.execute(tx);
        if (!rows[0]?.locked) return undefined;
      }
      const pending = await pendingStatements(tx, MAX_BATCH);
      if (pending.length === 0) return undefined;
      const oldSize = Number((await latestCheckpoint(tx))?.tree_size ?? 0);
      const newSize = oldSize + pending.length;
      const leaves = pending.map((p) => leafHash(sha256Sync, utf8(p.jws)));

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
      await insertLeaves(tx, pending.map((p, i) => ({ leaf_index: oldSize + i, proof_id: p.id, leaf_hash: toHex(leaves[i]!) })));
      await insertNodes(tx, nodes);
      // The primary key on tree_size refuses a second, different checkpoint of the same size.
      await insertCheckpoint(tx, { tree_size: newSize, root_hash: toHex(root), note, created_at: now });
      await markSealed(tx, pending.map((p) => p.id), newSize, now);
      await emitEvents(
        tx,
        pending.map((statement, i) => ({
          orgId: statement.org_id,
          type: 'record.proof_delivered' as const,
          payload: { recordId: statement.record_id, proofId: statement.id, proofUrl: this.proofUrl(statement.id), leafIndex: oldSize + i, treeSize: newSize },
          occurredAt: now,
        })),
      );
      return { treeSize: newSize, sealed: pending.length };
    });
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
