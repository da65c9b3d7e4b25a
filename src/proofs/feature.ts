import { readFileSync } from 'node:fs';
import { backgroundLoop, intervalLoop } from '../background-loop.js';
import { ConfigError, type Config } from '../config.js';
import { sha256Sync } from './keys.js';
import { parseWitnessPolicySync, PolicyError } from './witness-policy.js';
import { CheckpointWitnessing, type SubmittingPolicy } from './checkpoint-witnessing.js';
import { CheckpointTimestamping, type TimestampAuthority } from './checkpoint-timestamping.js';
import { parseCertificates } from './timestamp-token.js';
import { defineFeature } from '../feature.js';
import type { JobDefinition } from '../jobs/job-registry.js';
import { PROOF_EVENTS } from './events.js';
import { proofRoutes, transparencyRoutes } from './routes.js';
import { proofComponents } from './schemas.js';
import { proofExamples } from './examples.js';
import { SequencerMetrics } from './sequencer-metrics.js';
import { ProofService } from './service.js';
import { StatementSigner } from './statement-signer.js';
import { TransparencyLog } from './transparency-log.js';
import { byDialect } from '../db/database.js';
import { postgresSigningInSeal } from './log-sealing-postgres.js';
import { SqliteSigningAhead } from './log-sealing-sqlite.js';
import { verifyPageRoutes } from './verify-page.js';

declare module '../feature.js' {
  interface FeatureServices {
    proofs: ProofService;
    /** The proof sequencer's log; run by the `proof-sequencer` job. */
    transparencyLog: TransparencyLog;
    /** With WO_WITNESS_POLICY: submits checkpoints to the witnesses (the `checkpoint-witnessing` job). */
    witnessing: CheckpointWitnessing | undefined;
    /** With WO_TSA_URL: has published checkpoints timestamped (the `checkpoint-timestamping` job). */
    timestamping: CheckpointTimestamping | undefined;
  }
}
declare module '../keys/scopes.js' {
  interface ScopeCatalogue extends Record<keyof typeof PROOF_SCOPES, string> {}
}

const PROOF_SCOPES = { 'proofs:read': 'Fetch completion proofs of work orders.' } as const;

/** How often new completion statements are picked up for signing ahead of their seal. */
const PROOF_SIGN_AHEAD_INTERVAL_MS = 100;

/** WO_WITNESS_POLICY, read and checked at start: a policy the service cannot use stops it (exit 2). */
function readWitnessPolicy(config: Config): { policy: SubmittingPolicy; text: string } | undefined {
  const file = config.proofs.witnessPolicyFile;
  if (!file) return undefined;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`WO_WITNESS_POLICY: cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  try {
    const policy = parseWitnessPolicySync(sha256Sync, text);
    const withoutUrl = policy.witnesses.filter((witness) => !witness.url);
    if (withoutUrl.length > 0) throw new PolicyError(`the service submits to each witness: give ${withoutUrl.map((w) => w.name).join(', ')} a URL (witness <name> <vkey> <url>)`);
    if (policy.witnesses.length === 0) throw new PolicyError('the policy names no witness');
    return { policy: policy as SubmittingPolicy, text };
  } catch (error) {
    if (error instanceof PolicyError) throw new ConfigError(`WO_WITNESS_POLICY (${file}): ${error.message}`);
    throw error;
  }
}

/** How long the TSA has to answer one request: public TSAs answer in well under a second. */
const TSA_TIMEOUT_MS = 10_000;

/** WO_TSA_URL and the roots of WO_TSA_ROOTS, read and checked at start: roots the service cannot read stop it (exit 2). */
function readTimestampAuthority(config: Config): { authority: TimestampAuthority; rootsPem: string } | undefined {
  const configured = config.proofs.timestampAuthority;
  if (!configured) return undefined;
  let pem: string;
  try {
    pem = readFileSync(configured.rootsFile, 'utf8');
  } catch (error) {
    throw new ConfigError(`WO_TSA_ROOTS: cannot read ${configured.rootsFile}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const roots = parseCertificates(pem);
  if (typeof roots === 'string') throw new ConfigError(`WO_TSA_ROOTS (${configured.rootsFile}): ${roots}`);
  return { authority: { url: configured.url, roots }, rootsPem: pem };
}

/** Completion proofs: statements signed as work orders complete, sealed into the transparency log. */
export const proofsFeature = defineFeature({
  name: 'proofs',
  tags: [{ name: 'Proofs', description: 'Verifiable completion proofs and the public transparency log; see docs/proofs.md.' }],
  scopes: PROOF_SCOPES,
  events: PROOF_EVENTS,
  schemas: proofComponents,
  examples: proofExamples,
  build({ database, clock, config, logger, workerMetrics, services }) {
    const { proofKeys } = services;
    // Read first: a refusal must come before anything that would hold the process open is started.
    const configured = readWitnessPolicy(config);
    const tsa = readTimestampAuthority(config);
    const statementSigner = new StatementSigner(() => proofKeys.statementSigningKey, { logger });
    const sealing = byDialect(database, { sqlite: (sqlite) => new SqliteSigningAhead(sqlite.db, statementSigner), postgres: () => postgresSigningInSeal(statementSigner) });
    const policy = configured?.policy;
    const transparencyLog = new TransparencyLog(database, proofKeys, statementSigner, sealing, clock, (proofId) => `${config.publicUrl}/api/v1/proofs/${proofId}`, policy !== undefined);
    const proofs = new ProofService(database.db, clock, proofKeys, transparencyLog);
    services.records.onCompleted((executor, completion, appends) => proofs.recordCompletion(executor, completion, appends));

    const sequencerMetrics = new SequencerMetrics(workerMetrics.registry);
    const jobs: JobDefinition[] = [
      {
        placement: 'one-worker-at-a-time',
        periodMs: config.proofs.batchIntervalMs,
        does: 'seals completed work orders’ statements into the transparency log and signs its checkpoint',
        loop: intervalLoop({
          name: 'proof-sequencer',
          intervalMs: config.proofs.batchIntervalMs,
          work: () => sequencerMetrics.observe(() => transparencyLog.sealPending()),
          onStart: () => workerMetrics.expose(),
          logger,
          errorMessage: 'proof sequencing failed',
        }),
      },
    ];
    let witnessing: CheckpointWitnessing | undefined;
    if (policy) {
      witnessing = new CheckpointWitnessing(
        database.db,
        transparencyLog,
        policy,
        { timeoutMs: config.proofs.witnessTimeoutMs, failOpen: config.proofs.witnessFailOpen, idleMs: config.proofs.batchIntervalMs },
        clock,
        logger,
        workerMetrics.registry,
      );
      const submitting = witnessing;
      const loop = backgroundLoop({
        name: 'checkpoint-witnessing',
        step: () => submitting.step(),
        retryMs: config.proofs.batchIntervalMs,
        onStart: () => workerMetrics.expose(),
        logger,
        errorMessage: 'submitting a checkpoint to its witnesses failed',
      });
      transparencyLog.onSealed = (treeSize) => {
        submitting.sealed(treeSize);
        loop.wake();
      };
      jobs.push({ placement: 'one-worker-at-a-time', periodMs: config.proofs.batchIntervalMs, does: 'submits each new checkpoint to the witnesses of WO_WITNESS_POLICY and publishes it at their quorum', loop });
    }
    let timestamping: CheckpointTimestamping | undefined;
    if (tsa) {
      const stamping = new CheckpointTimestamping(database.db, transparencyLog, tsa.authority, { timeoutMs: TSA_TIMEOUT_MS, idleMs: config.proofs.batchIntervalMs }, clock, logger, workerMetrics.registry);
      timestamping = stamping;
      const loop = backgroundLoop({
        name: 'checkpoint-timestamping',
        step: () => stamping.step(),
        retryMs: config.proofs.batchIntervalMs,
        onStart: () => workerMetrics.expose(),
        logger,
        errorMessage: 'timestamping a checkpoint failed',
      });
      transparencyLog.onPublished = (treeSize) => {
        stamping.published(treeSize);
        loop.wake();
      };
      jobs.push({ placement: 'one-worker-at-a-time', periodMs: config.proofs.batchIntervalMs, does: 'has each published checkpoint timestamped by the RFC 3161 TSA of WO_TSA_URL', loop });
    }
    // On SQLite, statements are signed between seals as they come (see TransparencyLog.signAhead); on
    // PostgreSQL only the sequencer holding the lock signs, inside its seal.
    jobs.push(
      ...byDialect<JobDefinition[]>(database, {
        sqlite: () => [
          {
            placement: 'every-worker',
            periodMs: PROOF_SIGN_AHEAD_INTERVAL_MS,
            does: 'signs new completion statements ahead of their seal',
            loop: intervalLoop({ name: 'proof-signer', intervalMs: PROOF_SIGN_AHEAD_INTERVAL_MS, work: () => transparencyLog.signAhead(), logger, errorMessage: 'signing completion statements failed' }),
          },
        ],
        postgres: () => [],
      }),
    );
    return {
      services: { proofs, transparencyLog, witnessing, timestamping },
      api: async (api) => {
        await api.register(proofRoutes(proofs));
        await api.register(transparencyRoutes(proofs));
      },
      pages: [{ plugin: verifyPageRoutes(proofs, configured?.text, tsa?.rootsPem) }],
      jobs,
      close: () => statementSigner.stop(),
    };
  },
});
