import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { SealResult } from './transparency-log.js';

/**
 * The proof sequencer's Prometheus metrics, per process. On PostgreSQL every worker runs a sequencer
 * and each seal is made by whichever one takes the lock for it (the lock lasts one seal transaction),
 * so several workers' counters move, one seal at a time: summed over processes, seals count the log's
 * checkpoints.
 */
export class SequencerMetrics {
  private readonly seals;
  private readonly statements;
  private readonly treeSize;
  private readonly lastSeal;
  private readonly failures;
  private readonly duration;

  constructor(registry: Registry) {
    const registers = [registry];
    this.seals = new Counter({ name: 'wo_proof_seals_total', help: 'Checkpoints this process signed, each sealing a batch of completion statements', registers });
    this.statements = new Counter({ name: 'wo_proof_statements_sealed_total', help: 'Completion statements this process sealed into the transparency log', registers });
    this.treeSize = new Gauge({ name: 'wo_proof_log_tree_size', help: 'Size of the transparency log at the last seal by this process', registers });
    this.lastSeal = new Gauge({ name: 'wo_proof_last_seal_timestamp_seconds', help: 'When this process last sealed a batch (Unix time)', registers });
    this.failures = new Counter({ name: 'wo_proof_sequencer_failures_total', help: 'Sequencer runs that failed (the sequencer retries; the log says why)', registers });
    this.duration = new Histogram({
      name: 'wo_proof_seal_duration_seconds',
      help: 'Time one seal took, from reading the pending statements to its commit',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers,
    });
  }

  /** Runs one sequencer turn and counts what it did. */
  async observe(seal: () => Promise<SealResult | undefined>): Promise<SealResult | undefined> {
    const started = performance.now();
    let result: SealResult | undefined;
    try {
      result = await seal();
    } catch (error) {
      this.failures.inc();
      throw error;
    }
    if (result) {
      this.duration.observe((performance.now() - started) / 1000);
      this.seals.inc();
      this.statements.inc(result.sealed);
      this.treeSize.set(result.treeSize);
      this.lastSeal.set(Date.now() / 1000);
    }
    return result;
  }
}
