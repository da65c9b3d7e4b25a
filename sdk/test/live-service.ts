import { createClient, type WorkOrderClient } from '@work-order-api/client';
import { itOnEachDatabase, type TestApp, type TestAppOptions, type Tenant } from '../../test/helpers/test-app.js';
import type { Scope } from '../../src/keys/scopes.js';

export interface LiveService {
  harness: TestApp;
  /** http://127.0.0.1:<port> of the app, listening for real. */
  baseUrl: string;
  tenant: Tenant;
  /** A client of `tenant`, with quick retries. */
  client: WorkOrderClient;
}

/**
 * One test per database, each against the real app listening on loopback (fetch needs a socket), on
 * a fresh SQLite file or PostgreSQL schema.
 */
export function itAgainstLiveService(name: string, fn: (service: LiveService) => Promise<void>, options: TestAppOptions & { scopes?: Scope[] } = {}): void {
  itOnEachDatabase(
    name,
    async (harness) => {
      // As `wo serve` does: the dispatcher feeds the event feed and webhooks, the sequencer seals proofs.
      for (const job of harness.context.backgroundJobs) job.start();
      const baseUrl = await harness.app.listen({ host: '127.0.0.1', port: 0 });
      const tenant = await harness.newTenant(options.scopes);
      const client = createClient({ baseUrl, apiKey: tenant.key, retry: { baseDelayMs: 20 } });
      await fn({ harness, baseUrl, tenant, client });
    },
    options,
  );
}

export function workOrderBody(categoryId: string) {
  return { categoryId, address: '12 Harbour Road, Unit 4', requesterName: 'Ann Tenant', description: 'Kitchen tap leaks' };
}
