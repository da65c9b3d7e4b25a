import type { Database, Executor, Tx } from '../db/database.js';
import type { TlogNodesTable } from './tables.js';
import { emitEvents } from '../events/outbox.js';
import { isoNow, type Clock } from '../clock.js';
import { formatCheckpointBody, SIGNATURE_LINE_PREFIX } from './checkpoint.js';
import { fromBase64, toHex, utf8 } from './encoding.js';
import type { ProofKeys } from './keys.js';
import { sha256Sync } from './keys.js';
import type { LogSealing } from './log-sealing.js';
import { appendLeaves, consistencyProof, frontier, inclusionProof, leafHash, recordSubtreeReads, type Bytes, type SubtreeSource, type SyncSha256 } from './merkle.js';
import {
  appendCosignatures,
  checkpointAt,
  firstCheckpointFrom,
  hasStatementsToSeal,
  latestPublishedCheckpoint,
  markPublished,
  publishedCheckpointAt,
  readLevelRange,
  statementsOfLeaves,
  insertCheckpoint,
  insertLeaves,
  insertNodes,
  latestCheckpoint,
  pendingStatements,
  readSubtrees,
  saveTimestampToken,
  publishedWithoutTimestamp,
  type SealedStatement,
} from './repository.js';
import type { StatementSigner } from './statement-signer.js';
import type { TlogCheckpointsTable } from './tables.js';
import { tileHashRange, type TileCoordinates } from './tiles.js';

/** Statements kept in memory between their seal and their publication (see awaitingDelivery). */
const MAX_KEPT_FOR_DELIVERY = 50_000;

interface DeliveredStatement {
  id: string;
  org_id: string;
  record_id: string;
  leaf_index: number;
}

/** Largest batch one seal takes; the rest waits for the next tick (keeps one transaction bounded). */
const MAX_BATCH = 10_000;

export interface SealResult {
  treeSize: number;
  sealed: number;
}

/** Standard base64 by Node's encoder (this file runs on the server only; encoding.ts's is the browser's). */
function base64(bytes: Bytes): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
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
    /**
     * With a witness policy, a sealed checkpoint waits for its witnesses (checkpoint-witnessing.ts publishes it,
     * and only then are its statements delivered); without one it is published as it is sealed.
     */
    readonly witnessed = false,
  ) {}

  /** Called after each seal that appended leaves (the witnessing loop wakes on it). */
  onSealed: (treeSize: number) => void = () => {};
  /** Called after this process published a checkpoint, at its seal or later (the timestamping loop wakes on it). */
  onPublished: (treeSize: number) => void = () => {};

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
      const publication = this.witnessed ? null : ('log-signed' as const);
      await insertCheckpoint(tx, { tree_size: newSize, root_hash: toHex(tree.root), note, created_at: now, published_at: publication && now, publication, cosignatures: '', timestamp_token: null });
      await this.sealing.markSealed(
        tx,
        batch.map((statement, i): SealedStatement => ({ id: statement.row.id, was: statement.was, jws: statement.jws, digest: statement.digest, leafIndex: oldSize + i })),
        newSize,
        now,
      );
      // Witnessed checkpoints deliver their statements when they are published (publish).
      const delivered = batch.map(({ row }, i) => ({ id: row.id, org_id: row.org_id, record_id: row.record_id, leaf_index: oldSize + i }));
      if (publication) await this.emitDelivered(tx, delivered, newSize, now);
      return { treeSize: newSize, sealed: batch.length, proofIds: batch.map(({ row }) => row.id), delivered: publication ? undefined : delivered };
    });
    // Sealed now, or by another process: either way their signatures are no longer needed.
    if (result) this.sealing.sealed(result.proofIds);
    if (result?.delivered) this.keepForDelivery(result.delivered);
    if (result) this.onSealed(result.treeSize);
    // Without witnesses a checkpoint is published as it is sealed.
    if (result && !this.witnessed) this.onPublished(result.treeSize);
    return result && { treeSize: result.treeSize, sealed: result.sealed };
  }

  /**
   * What the statements sealed here and not yet published are delivered with, by leaf index: the
   * publication then reads nothing to emit their events (one read per statement, otherwise). Bounded;
   * a publication that finds any missing (sealed elsewhere, or before a restart) reads them all.
   */
  private readonly awaitingDelivery = new Map<number, DeliveredStatement>();

  private keepForDelivery(statements: DeliveredStatement[]): void {
    if (this.awaitingDelivery.size + statements.length > MAX_KEPT_FOR_DELIVERY) return;
    for (const statement of statements) this.awaitingDelivery.set(statement.leaf_index, statement);
  }

  private async toDeliver(tx: Tx, from: number, to: number): Promise<DeliveredStatement[]> {
    const kept: DeliveredStatement[] = [];
    for (let leaf = from; leaf < to; leaf++) {
      const statement = this.awaitingDelivery.get(leaf);
      if (!statement) return (await statementsOfLeaves(tx, from, to)).map((row) => ({ ...row, leaf_index: Number(row.leaf_index) }));
      kept.push(statement);
    }
    return kept;
  }

  private async emitDelivered(tx: Tx, statements: Array<{ id: string; org_id: string; record_id: string; leaf_index: number }>, treeSize: number, now: string): Promise<void> {
    await emitEvents(
      tx,
      statements.map((row) => ({
        orgId: row.org_id,
        type: 'record.proof_delivered' as const,
        payload: { recordId: row.record_id, proofId: row.id, proofUrl: this.proofUrl(row.id), leafIndex: Number(row.leaf_index), treeSize },
        occurredAt: now,
      })),
    );
  }

  /**
   * Publishes the sealed checkpoint of `treeSize` (witnessed, or flagged unwitnessed) and delivers the
   * statements sealed since the last published checkpoint, all in one transaction under the
   * sequencer's claim: the events exist exactly when their bundles can be fetched, and two processes
   * never deliver the same statements. False when another process holds the claim or published it.
   */
  async publish(treeSize: number, publication: 'witnessed' | 'unwitnessed'): Promise<boolean> {
    let deliveredUpTo = 0;
    const published = await this.database.db.transaction().execute(async (tx) => {
      if (!(await this.sealing.claim(tx))) return false;
      const previous = Number((await latestPublishedCheckpoint(tx))?.tree_size ?? 0);
      deliveredUpTo = previous;
      if (previous >= treeSize) return false;
      const now = isoNow(this.clock);
      if (!(await markPublished(tx, treeSize, publication, now))) return false;
      await this.emitDelivered(tx, await this.toDeliver(tx, previous, treeSize), treeSize, now);
      deliveredUpTo = treeSize;
      return true;
    });
    // Delivered here or by another process: no longer kept.
    for (const leaf of this.awaitingDelivery.keys()) if (leaf < deliveredUpTo) this.awaitingDelivery.delete(leaf);
    if (published) this.onPublished(treeSize);
    return published;
  }

  /** Adds witnesses' cosignature lines to a sealed checkpoint. */
  async addCosignatures(treeSize: number, lines: string[]): Promise<void> {
    if (lines.length > 0) await appendCosignatures(this.database.db, treeSize, lines.join(''));
  }

  /** The latest sealed checkpoint row, published or not (what the witnessing loop submits). */
  async latestSealed(db: Executor = this.database.db): Promise<TlogCheckpointsTable | undefined> {
    return latestCheckpoint(db);
  }

  /** The first sealed checkpoint of at least `treeSize` leaves. */
  async sealedFrom(treeSize: number, db: Executor = this.database.db): Promise<TlogCheckpointsTable | undefined> {
    return firstCheckpointFrom(db, treeSize);
  }

  /** The latest published checkpoint, cosigned: what `/transparency/checkpoint` serves. */
  async latestPublished(db: Executor = this.database.db): Promise<{ treeSize: number; note: string; publication: string } | undefined> {
    const row = await latestPublishedCheckpoint(db);
    return row ? { treeSize: Number(row.tree_size), note: cosignedNote(row), publication: row.publication! } : undefined;
  }

  async publishedAt(treeSize: number, db: Executor = this.database.db): Promise<{ treeSize: number; note: string; publication: string } | undefined> {
    const row = await publishedCheckpointAt(db, treeSize);
    return row ? { treeSize: Number(row.tree_size), note: cosignedNote(row), publication: row.publication! } : undefined;
  }


  /** Published checkpoints of at least `fromSize` leaves without a TSA's token yet, oldest first. */
  async untimestamped(fromSize: number, limit: number, db: Executor = this.database.db): Promise<TlogCheckpointsTable[]> {
    return publishedWithoutTimestamp(db, fromSize, limit);
  }

  /** Keeps a TSA's token (DER, base64) on the checkpoint of `treeSize`. */
  async addTimestampToken(treeSize: number, token: string): Promise<void> {
    await saveTimestampToken(this.database.db, treeSize, token);
  }

  /** A tile's bytes, read from the stored hashes. */
  async tile(tile: TileCoordinates, db: Executor = this.database.db): Promise<Buffer> {
    const { merkleLevel, first, count } = tileHashRange(tile);
    const hashes = await readLevelRange(db, merkleLevel, first, count);
    if (hashes.length !== count) throw new Error(`transparency log is missing hashes of tile ${tile.level}/${tile.index}`);
    return Buffer.from(hashes.join(''), 'hex');
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
    return this.proveFromStore(db, (sha256, source) => inclusionProof(sha256, source, leafIndex, treeSize));
  }

  async consistencyProof(first: number, second: number, db: Executor = this.database.db): Promise<string[]> {
    return this.proveFromStore(db, (sha256, source) => consistencyProof(sha256, source, first, second));
  }

  async leafHash(leafIndex: number, db: Executor = this.database.db): Promise<string | undefined> {
    const hashes = await readSubtrees(db, [{ level: 0, index: leafIndex }]);
    const hex = hashes.get(`0:${leafIndex}`);
    return hex ? Buffer.from(hex, 'hex').toString('base64') : undefined;
  }

  private async proveFromStore(db: Executor, prove: (sha256: SyncSha256, source: SubtreeSource) => Bytes[]): Promise<string[]> {
    const known = await this.readHashes(db, recordSubtreeReads(prove));
    return prove(sha256Sync, mapSource(known)).map(base64);
  }

  private async readHashes(db: Executor | Tx, keys: Array<{ level: number; index: number }>): Promise<Map<string, Bytes>> {
    const known = new Map<string, Bytes>();
    for (const [key, hex] of await readSubtrees(db, keys)) known.set(key, Buffer.from(hex, 'hex'));
    return known;
  }
}

/**
 * A checkpoint as served: the log's note with the witnesses' cosignature lines after its signature,
 * one per witness key (the first it gave: the earliest time, the tightest bound).
 */
export function cosignedNote(row: Pick<TlogCheckpointsTable, 'note' | 'cosignatures'>): string {
  const seen = new Set<string>();
  const lines = row.cosignatures
    .split('\n')
    .filter((line) => line.startsWith(SIGNATURE_LINE_PREFIX))
    .filter((line) => {
      const [name, encoded] = line.slice(SIGNATURE_LINE_PREFIX.length).split(' ');
      const key = `${name} ${toHex(fromBase64(encoded ?? '')?.slice(0, 4) ?? new Uint8Array())}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  return `${row.note}${lines.map((line) => `${line}\n`).join('')}`;
}
