import { startBenchScript, waitFor, type ManagedProcess } from './processes.js';

export interface ReceiverStats {
  count: number;
  firstAt: number | null;
  lastAt: number | null;
  latencyP50Ms: number | null;
  latencyP99Ms: number | null;
  checkedSignatures: number;
  badSignatures: number;
  samplePayloads: Record<string, unknown>[];
  receipts?: { recordId: string | undefined; receivedAt: number; payload: Record<string, unknown> }[];
}

/** The local webhook receiver (bench/webhook-receiver.ts) in its own process, and its small control API. */
export class WebhookReceiver {
  private constructor(private readonly process: ManagedProcess & { baseUrl: string }) {}

  static async start(): Promise<WebhookReceiver> {
    return new WebhookReceiver(await startBenchScript('webhook-receiver.ts'));
  }

  hookUrl(name: string): string {
    return `${this.process.baseUrl}/hooks/${name}`;
  }

  async addSecret(name: string, secret: string): Promise<void> {
    await fetch(`${this.process.baseUrl}/secrets`, { method: 'PUT', body: JSON.stringify({ [`/hooks/${name}`]: secret }) });
  }

  async reset(): Promise<void> {
    await fetch(`${this.process.baseUrl}/reset`, { method: 'POST' });
  }

  async stats(event?: string, withReceipts = false): Promise<ReceiverStats> {
    const query = new URLSearchParams({ ...(event ? { event } : {}), ...(withReceipts ? { receipts: '1' } : {}) });
    return (await (await fetch(`${this.process.baseUrl}/stats?${query}`)).json()) as ReceiverStats;
  }

  /** Waits until `count` deliveries of `event` arrived, or the deadline passes (then answers what did arrive). */
  async waitForCount(count: number, deadlineMs: number, event?: string): Promise<ReceiverStats> {
    try {
      return await waitFor(`${count} deliveries`, deadlineMs, async () => {
        const stats = await this.stats(event);
        return stats.count >= count ? stats : undefined;
      }, 100);
    } catch {
      return this.stats(event);
    }
  }

  async stop(): Promise<void> {
    await this.process.stop();
  }
}
