import { sql } from 'kysely';
import type { VersionedMigration } from '../migrate.js';

/** Completion statements and the RFC 9162 transparency log they are sealed into. */
export const proofs: VersionedMigration = {
  name: '0004-proofs',
  async up(db, dialect) {
    const bigint = dialect === 'postgres' ? 'bigint' : 'integer';

    await db.schema
      .createTable('proof_statements')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('record_id', 'text', (c) => c.notNull())
      .addColumn('jws', 'text', (c) => c.notNull())
      .addColumn('statement_digest', 'text', (c) => c.notNull())
      .addColumn('supersedes', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('leaf_index', bigint, (c) => c.unique())
      .addColumn('tree_size', bigint)
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('sealed_at', 'text')
      .execute();
    // a record's latest proof (GET /records/{id}/proof) and the `supersedes` link at completion
    await db.schema.createIndex('proof_statements_record').on('proof_statements').columns(['org_id', 'record_id', 'id']).execute();
    // the sequencer's "pending statements in order" scan stays small however many are sealed
    await sql`CREATE INDEX proof_statements_pending ON proof_statements (id) WHERE status = 'pending'`.execute(db);

    await db.schema
      .createTable('tlog_leaves')
      .addColumn('leaf_index', bigint, (c) => c.primaryKey())
      .addColumn('proof_id', 'text', (c) => c.notNull().unique())
      .addColumn('leaf_hash', 'text', (c) => c.notNull())
      .execute();

    // Hashes of every perfect subtree above the leaves (level ≥ 1), so any proof is O(log n) reads.
    await db.schema
      .createTable('tlog_nodes')
      .addColumn('level', 'integer', (c) => c.notNull())
      .addColumn('node_index', bigint, (c) => c.notNull())
      .addColumn('hash', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('tlog_nodes_pk', ['level', 'node_index'])
      .execute();

    await db.schema
      .createTable('tlog_checkpoints')
      .addColumn('tree_size', bigint, (c) => c.primaryKey())
      .addColumn('root_hash', 'text', (c) => c.notNull())
      .addColumn('note', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
  },
};
