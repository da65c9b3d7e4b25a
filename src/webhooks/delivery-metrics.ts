import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { AttemptOutcome } from './retry-policy.js';

/** What the metrics read of one result: the attempt (absent when nothing was sent) and its outcome. */
export interface ObservedResult {
  attempt?: { attempt: number; duration_ms: number };
  outcome: AttemptOutcome;
  /** Why an attempt was recorded without sending (its own label). */
  unsent?: string;
}

/** A delivery that reached its final state in this batch, with when it was created. */
export interface FinishedDelivery {
  outcome: 'succeeded' | 'failed';
  createdAt: string;
}

/** The delivery worker's Prometheus metrics. */
export class DeliveryMetrics {
  private readonly deliveries;
  private readonly attempts;
  private readonly attemptDuration;
  private readonly deliveryLatency;
  private readonly inFlight;

  constructor(registry: Registry) {
    const registers = [registry];
    this.deliveries = new Counter({
      name: 'wo_webhook_deliveries_total',
      help: 'Webhook deliveries that reached a final state, by outcome (succeeded, failed)',
      labelNames: ['outcome'] as const,
      registers,
    });
    this.attempts = new Counter({
      name: 'wo_webhook_attempts_total',
      help: 'Webhook delivery attempts by result (success, retry, permanent, exhausted, skipped, secret_unusable)',
      labelNames: ['result'] as const,
      registers,
    });
    this.attemptDuration = new Histogram({
      name: 'wo_webhook_attempt_duration_seconds',
      help: 'Time from sending a webhook to reading its (capped) response',
      labelNames: ['result'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.deliveryLatency = new Histogram({
      name: 'wo_webhook_delivery_latency_seconds',
      help: 'Time from the event being recorded to its successful delivery',
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30, 120, 600],
      registers,
    });
    this.inFlight = new Gauge({ name: 'wo_webhook_in_flight', help: 'Webhook sends in flight in this process', registers });
  }

  sendsInFlight(count: number): void {
    this.inFlight.set(count);
  }

  /** Counts a recorded batch: every result by kind, and the deliveries it finished. */
  recordedBatch(batch: readonly ObservedResult[], finished: readonly FinishedDelivery[], maxAttempts: number, now: Date): void {
    // Counted here and added once per label: prom-client hashes the labels on every inc().
    const attempts = new Map<string, number>();
    const outcomes = new Map<string, number>();
    for (const result of batch) {
      const label = resultLabel(result, maxAttempts);
      attempts.set(label, (attempts.get(label) ?? 0) + 1);
      if (result.attempt && !result.unsent) this.attemptDuration.observe({ result: label }, result.attempt.duration_ms / 1000);
    }
    for (const { outcome, createdAt } of finished) {
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      if (outcome === 'succeeded') this.deliveryLatency.observe((now.getTime() - Date.parse(createdAt)) / 1000);
    }
    for (const [result, n] of attempts) this.attempts.inc({ result }, n);
    for (const [outcome, n] of outcomes) this.deliveries.inc({ outcome }, n);
  }
}

function resultLabel(result: ObservedResult, maxAttempts: number): string {
  if (result.unsent) return result.unsent;
  if (!result.attempt) return 'skipped';
  if (result.outcome.kind === 'success') return 'success';
  if (result.outcome.kind === 'permanent') return 'permanent';
  return result.attempt.attempt >= maxAttempts ? 'exhausted' : 'retry';
}
