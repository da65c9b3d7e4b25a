import type { Db, Executor } from '../db/database.js';
import type { RowAppends } from '../db/row-appends.js';
import { errors } from '../errors.js';
import { newId } from '../ids.js';
import { isoNow, type Clock } from '../clock.js';
import type { CompletionContext } from '../records/service.js';
import { assertIJson, NotIJsonError } from '../canonical-json.js';
import type { ProofKeys } from './keys.js';
import { buildCompletionStatement } from './statement.js';
import { cosignedNote, type TransparencyLog } from './transparency-log.js';
import { BUNDLE_MEDIA_TYPE, BUNDLE_VERSION, type Jwks, type ProofBundle } from './verify.js';
import { findServedProof, latestStatementIdOfRecord, servedProofOfRecord, type ServedProof } from './repository.js';
import { toHex } from './encoding.js';

export interface PendingProof {
  status: 'pending';
  proofId: string;
  recordId: string;
  createdAt: string;
}

export type ProofAnswer = { status: 'sealed'; bundle: ProofBundle } | PendingProof;

/** Completion statements: signed when a work order completes, served as bundles once sealed. */
export class ProofService {
  private readonly kidByHeader = new Map<string, string>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly keys: ProofKeys,
    readonly log: TransparencyLog,
  ) {}

  /**
   * The RecordService completion hook: builds the statement inside the completing transaction and
   * stores it for the sequencer, which signs and seals it (the request waits for neither).
   */
  /** Adds the completion's statement, unsigned, to what the completion writes (`appends`); `executor` reads. */
  async recordCompletion(executor: Executor, completion: CompletionContext, appends: RowAppends): Promise<void> {
    const { orgId, record } = completion;
    // The history holds every action, this completion included: only a work order completed before
    // (and reopened since) has a statement to supersede, so most completions skip the lookup.
    const completedBefore = completion.history.filter((entry) => entry.action === 'complete').length > 1;
    const previousId = completedBefore ? ((await latestStatementIdOfRecord(executor, orgId, record.id)) ?? null) : null;
    const proofId = newId('proof');
    const statement = buildCompletionStatement({
      proofId,
      orgId,
      record,
      history: completion.history,
      evidence: completion.evidence,
      supersedes: previousId,
      checklists: completion.checklists,
    });
    try {
      // Refused now, while the caller can still correct the data, not later by the sequencer.
      assertIJson(statement);
    } catch (error) {
      if (error instanceof NotIJsonError) {
        throw errors.unprocessable(
          `The work order holds data a completion proof cannot carry faithfully (${error.message}); correct it and complete again.`,
        );
      }
      throw error;
    }
    appends.add('proof_statements', {
      id: proofId,
      org_id: orgId,
      record_id: record.id,
      jws: '',
      statement_digest: '',
      // I-JSON survives a JSON round trip unchanged, so the sequencer canonicalizes the same value.
      statement_json: JSON.stringify(statement),
      supersedes: previousId,
      status: 'unsigned',
      leaf_index: null,
      tree_size: null,
      created_at: isoNow(this.clock),
      sealed_at: null,
    });
  }

  async forRecord(orgId: string, recordId: string): Promise<ProofAnswer> {
    const { record, proof } = await servedProofOfRecord(this.db, orgId, recordId, this.log.witnessed);
    if (!record) throw errors.notFound(`Work order "${recordId}"`);
    if (!proof) throw errors.notFound(`A completion proof of work order "${recordId}"`);
    return this.answer(proof);
  }

  async byId(orgId: string, proofId: string): Promise<ProofAnswer> {
    const proof = await findServedProof(this.db, orgId, proofId, this.log.witnessed);
    if (!proof) throw errors.notFound(`Proof "${proofId}"`);
    return this.answer(proof);
  }

  jwks(): Jwks {
    return this.keys.jwks();
  }

  get verifierKey(): string {
    return this.keys.log.verifierKey;
  }

  /**
   * The `kid` of a statement's protected header. Every statement a key signed has the same header, so
   * each distinct header is decoded once (a handful: one per statement key the log has known).
   */
  private statementKid(jws: string): string {
    const encodedHeader = jws.slice(0, jws.indexOf('.'));
    let kid = this.kidByHeader.get(encodedHeader);
    if (kid === undefined) {
      kid = (JSON.parse(Buffer.from(encodedHeader, 'base64url').toString('utf8')) as { kid: string }).kid;
      if (this.kidByHeader.size >= 64) this.kidByHeader.clear();
      this.kidByHeader.set(encodedHeader, kid);
    }
    return kid;
  }

  private async answer({ statement, checkpoint: published }: ServedProof): Promise<ProofAnswer> {
    // Unsealed, or sealed but its checkpoint (and every later one) still waits for its witnesses: not delivered yet.
    if (statement.status !== 'sealed' || statement.leaf_index === null || statement.tree_size === null || !published) {
      return { status: 'pending', proofId: statement.id, recordId: statement.record_id, createdAt: statement.created_at };
    }
    const leafIndex = Number(statement.leaf_index);
    const treeSize = Number(published.tree_size);
    const checkpoint = cosignedNote(published);
    const timestampToken = published.timestamp_token;
    const inclusionProof = await this.log.inclusionProof(leafIndex, treeSize);
    return {
      status: 'sealed',
      bundle: {
        status: 'sealed',
        version: BUNDLE_VERSION,
        mediaType: BUNDLE_MEDIA_TYPE,
        proofId: statement.id,
        recordId: statement.record_id,
        jws: statement.jws,
        leafIndex,
        treeSize,
        inclusionProof,
        checkpoint,
        ...(timestampToken ? { timestampToken } : {}),
        keys: { statementKid: this.statementKid(statement.jws), logKeyName: this.keys.log.name, logKeyId: toHex(this.keys.log.keyId) },
      },
    };
  }
}
