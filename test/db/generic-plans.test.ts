import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { createPostgresDatabase, POSTGRES_URL } from '../helpers/databases.js';
import { recordBody, seedCategory, startTestApp, waitFor, type TestApp, type Tenant } from '../helpers/test-app.js';

/**
 * PostgreSQL plans a named statement once per connection and may keep that generic plan for the
 * connection's life. Planned while the tables were empty (a fresh deployment; a server with autovacuum
 * off never gathers statistics), `id = $1 AND org_id = $2` went through an index leading on org_id, and
 * every later lookup by id walked the organization's whole index. This runs the service with generic
 * plans from the first execution on a database of its own, plans every statement while the organization
 * holds one work order, grows it to thousands, and checks, from PostgreSQL's own index statistics, that
 * reads and lifecycle writes by id never touch an index of the organization.
 */
if (POSTGRES_URL) {
  describe('lookups by id under generic plans made on empty tables (PostgreSQL)', () => {
    let database: { url: string; drop: () => Promise<void> };
    let service: TestApp | undefined;
    let tenant: Tenant;
    let admin: pg.Client;

    before(async () => {
      database = await createPostgresDatabase('wo_plans');
      admin = new pg.Client({ connectionString: database.url });
      await admin.connect();
      await admin.query(`ALTER DATABASE ${new URL(database.url).pathname.slice(1)} SET plan_cache_mode = force_generic_plan`);
      // One pooled connection: every statement is planned, and kept, on the connection that runs it later.
      service = await startTestApp('postgres', { databaseUrl: database.url, env: { WO_DATABASE_POOL_SIZE: '1', WO_RATE_LIMIT_PER_MINUTE: '0' } });
      tenant = await service.newTenant();
    });
    after(async () => {
      await service?.close();
      await admin?.end();
      await database?.drop();
    });

    it('reads and changes a work order through its primary key, not the organization’s indexes', async () => {
      const categoryId = await seedCategory(tenant);
      // Plans every statement of the path while the organization holds one work order.
      const first = await createAndWalk(tenant, categoryId);
      await admin.query(`
        INSERT INTO records
        SELECT (jsonb_populate_record(r, jsonb_build_object('id', r.id || '_' || g))).*
        FROM records r, generate_series(1, 3000) g`);
      const second = await createAndWalk(tenant, categoryId);
      assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/records/${first}` })).statusCode, 200);
      assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/records/${second}` })).statusCode, 200);

      // A session's index statistics reach the shared counters when it ends.
      await service!.close();
      service = undefined;
      const scans = await waitFor(async () => {
        await admin.query('SELECT pg_stat_clear_snapshot()');
        const { rows } = await admin.query<{ name: string; scans: number }>(
          `SELECT indexrelname AS name, idx_scan::int AS scans FROM pg_stat_user_indexes WHERE relname = 'records'`,
        );
        const byName = Object.fromEntries(rows.map((row) => [row.name, row.scans]));
        // Two walks of an assign, a start and a read by id, then two more reads: at least eight scans.
        return rows.reduce((sum, row) => sum + row.scans, 0) >= 8 ? byName : undefined;
      }, 15_000, 'the service session’s index statistics');
      for (const index of ['records_org_created', 'records_org_status_created', 'records_org_updated']) {
        assert.equal(scans[index], 0, `${index} was scanned: ${JSON.stringify(scans)}`);
      }
    });
  });
}

/** Creates a work order and takes it through assign, start and a read: answers its id. */
async function createAndWalk(tenant: Tenant, categoryId: string): Promise<string> {
  const created = await tenant.request({ method: 'POST', url: '/api/v1/records', headers: { 'idempotency-key': `plans-${Math.random()}` }, payload: recordBody(categoryId) });
  assert.equal(created.statusCode, 201, created.body);
  const id = created.json().id as string;
  const assigned = await tenant.request({ method: 'POST', url: `/api/v1/records/${id}/assign`, payload: { assignee: 'Tech One' } });
  assert.equal(assigned.statusCode, 200, assigned.body);
  const started = await tenant.request({ method: 'POST', url: `/api/v1/records/${id}/start`, payload: {} });
  assert.equal(started.statusCode, 200, started.body);
  assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/records/${id}` })).statusCode, 200);
  return id;
}
