import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { TestClock, itOnEachDatabase, seedCategory, startTestApp, type TestApp, type Tenant } from '../helpers/test-app.js';
import { TEST_DIALECTS } from '../helpers/databases.js';

// 2027-03-01 is a Monday; Europe/Berlin is UTC+1 until 2027-03-28.
const NOW = new Date('2027-03-01T06:00:00.000Z');

/** One test per database, each on a fresh app whose clock starts at NOW. */
function onEachDatabaseFromNow(name: string, fn: (harness: TestApp, clock: TestClock) => Promise<void>): void {
  for (const dialect of TEST_DIALECTS) {
    it(`${name} [${dialect}]`, async () => {
      const clock = new TestClock(new Date(NOW));
      const harness = await startTestApp(dialect, { clock });
      try {
        await fn(harness, clock);
      } finally {
        await harness.close();
      }
    });
  }
}

async function createSchedule(tenant: Tenant, body: Record<string, unknown>) {
  const response = await tenant.request({ method: 'POST', url: '/api/v1/schedules', payload: body });
  assert.equal(response.statusCode, 201, response.body);
  return response.json() as { id: string; nextDueAt: string | null; version: number };
}

async function workOrdersOf(tenant: Tenant) {
  const response = await tenant.request({ method: 'GET', url: '/api/v1/records?limit=100' });
  return (response.json().records as { id: string; dueAt: string; description: string; status: string }[]).sort((a, b) => (a.dueAt < b.dueAt ? -1 : 1));
}

async function occurrencesOf(tenant: Tenant, scheduleId: string, query = '') {
  const response = await tenant.request({ method: 'GET', url: `/api/v1/schedules/${scheduleId}/occurrences${query}` });
  assert.equal(response.statusCode, 200, response.body);
  return response.json().occurrences as { key: string; dueAt: string; status: string; recordId: string | null; reason: string | null }[];
}

describe('preventive-maintenance schedules', () => {
  onEachDatabaseFromNow(
      'plans a monthly calendar rule in its time zone and generates each work order once, lead time before it is due',
      async ({ context, newTenant }, testClock) => {
        const tenant = await newTenant();
        const categoryId = await seedCategory(tenant);
        const schedule = await createSchedule(tenant, {
          name: 'Monthly HVAC filter change',
          template: { categoryId, description: 'Replace the AHU-1 filters', priority: 'HIGH' },
          triggers: [{ type: 'calendar', rrule: 'FREQ=MONTHLY;BYDAY=1MO', start: '2027-03-01T08:00:00', timezone: 'Europe/Berlin' }],
          leadTime: 'P7D',
          overlap: 'create',
        });
        // The first Monday of March at 08:00 in Berlin is 07:00 UTC, one hour from now: due for generation already.
        assert.equal(schedule.nextDueAt, '2027-03-01T07:00:00.000Z');
        const planned = await occurrencesOf(tenant, schedule.id);
        assert.deepEqual(planned.slice(0, 3).map((o) => [o.key, o.dueAt, o.status]), [
          ['2027-03-01T08:00:00', '2027-03-01T07:00:00.000Z', 'PLANNED'],
          ['2027-04-05T08:00:00', '2027-04-05T06:00:00.000Z', 'PLANNED'],
          ['2027-05-03T08:00:00', '2027-05-03T06:00:00.000Z', 'PLANNED'],
        ]);

        await context.scheduleGenerator.runOnce();
        await context.scheduleGenerator.runOnce();
        let orders = await workOrdersOf(tenant);
        assert.deepEqual(orders.map((o) => o.dueAt), ['2027-03-01T07:00:00.000Z'], 'one work order for the first occurrence, however often the generator runs');
        assert.equal(orders[0]!.description, 'Replace the AHU-1 filters');

        // The history says the schedule made it.
        const history = (await tenant.request({ method: 'GET', url: `/api/v1/records/${orders[0]!.id}/events` })).json().events as { actor: { type: string; id: string } }[];
        assert.deepEqual(history[0]!.actor, { type: 'schedule', id: schedule.id });

        // April's occurrence comes up 7 days before it is due, on 2027-03-29 at 06:00 UTC.
        testClock.advance(Date.parse('2027-03-29T05:59:00.000Z') - testClock.now().getTime());
        await context.scheduleGenerator.runOnce();
        assert.equal((await workOrdersOf(tenant)).length, 1, 'not before its lead time');
        testClock.advance(2 * 60_000);
        await context.scheduleGenerator.runOnce();
        orders = await workOrdersOf(tenant);
        assert.deepEqual(orders.map((o) => o.dueAt), ['2027-03-01T07:00:00.000Z', '2027-04-05T06:00:00.000Z']);
        const recorded = await occurrencesOf(tenant, schedule.id, '?from=2027-03-01T00:00:00Z&to=2027-05-01T00:00:00Z');
        assert.deepEqual(recorded.map((o) => [o.key, o.status, o.recordId]), [
          ['2027-03-01T08:00:00', 'GENERATED', orders[0]!.id],
          ['2027-04-05T08:00:00', 'GENERATED', orders[1]!.id],
        ]);
      },
    );

  onEachDatabaseFromNow(
      'applies catchUp to occurrences already past: latest creates the last and records the earlier ones MISSED, with events',
      async ({ context, newTenant }) => {
        const tenant = await newTenant();
        const categoryId = await seedCategory(tenant);
        const schedule = await createSchedule(tenant, {
          name: 'Daily boiler check',
          template: { categoryId, description: 'Check the boiler pressure' },
          triggers: [{ type: 'calendar', rrule: 'FREQ=DAILY', start: '2027-02-25T09:00:00', timezone: 'UTC' }],
          overlap: 'create',
          catchUp: 'latest',
        });
        await context.scheduleGenerator.runOnce();
        const recorded = await occurrencesOf(tenant, schedule.id, '?from=2027-02-20T00:00:00Z&to=2027-03-01T06:00:00Z');
        assert.deepEqual(recorded.map((o) => [o.key, o.status, o.reason]), [
          ['2027-02-25T09:00:00', 'MISSED', 'catch_up_latest'],
          ['2027-02-26T09:00:00', 'MISSED', 'catch_up_latest'],
          ['2027-02-27T09:00:00', 'MISSED', 'catch_up_latest'],
          ['2027-02-28T09:00:00', 'GENERATED', null],
        ]);
        assert.equal((await workOrdersOf(tenant)).length, 1);
        const missed = await context.database.db.selectFrom('outbox_events').select('payload').where('type', '=', 'schedule.occurrence_missed').where('org_id', '=', tenant.orgId).orderBy('seq').execute();
        assert.deepEqual(missed.map((event) => JSON.parse(event.payload).occurrence), ['2027-02-25T09:00:00', '2027-02-26T09:00:00', '2027-02-27T09:00:00']);
      },
    );

  onEachDatabaseFromNow(
      'skips an occurrence while the previous work order is open, and a planned one skipped by request',
      async ({ context, newTenant }, testClock) => {
        const tenant = await newTenant();
        const categoryId = await seedCategory(tenant);
        const schedule = await createSchedule(tenant, {
          name: 'Weekly fire door check',
          template: { categoryId, description: 'Check the fire doors close' },
          triggers: [{ type: 'calendar', rrule: 'FREQ=WEEKLY', start: '2027-03-01T10:00:00', timezone: 'UTC' }],
          leadTime: 'P1D',
        });
        await context.scheduleGenerator.runOnce();
        const skip = await tenant.request({ method: 'POST', url: `/api/v1/schedules/${schedule.id}/occurrences/2027-03-15T10:00:00/skip` });
        assert.equal(skip.statusCode, 200, skip.body);
        assert.equal((await tenant.request({ method: 'POST', url: `/api/v1/schedules/${schedule.id}/occurrences/2027-03-15T10:00:00/skip` })).statusCode, 409);
        assert.equal((await tenant.request({ method: 'POST', url: `/api/v1/schedules/${schedule.id}/occurrences/2027-03-16T10:00:00/skip` })).statusCode, 404, 'not a planned occurrence');

        testClock.advance(8 * 86_400_000);
        await context.scheduleGenerator.runOnce();
        testClock.advance(7 * 86_400_000);
        await context.scheduleGenerator.runOnce();
        const recorded = await occurrencesOf(tenant, schedule.id, '?from=2027-03-01T00:00:00Z&to=2027-03-20T00:00:00Z');
        assert.deepEqual(recorded.map((o) => [o.key, o.status, o.reason]), [
          ['2027-03-01T10:00:00', 'GENERATED', null],
          ['2027-03-08T10:00:00', 'SKIPPED', 'previous_open'],
          ['2027-03-15T10:00:00', 'SKIPPED', 'skipped_by_request'],
        ]);
      },
    );

  onEachDatabaseFromNow(
      'counts an interval trigger from the completion of the previous work order',
      async ({ context, newTenant }, testClock) => {
        const tenant = await newTenant();
        const categoryId = await seedCategory(tenant);
        const schedule = await createSchedule(tenant, {
          name: 'Every 90 days after the last one',
          template: { categoryId, description: 'Service the generator', assignee: 'Ana' },
          triggers: [{ type: 'interval', every: 'P90D', start: '2027-03-01T07:00:00', timezone: 'UTC' }],
          leadTime: 'P1D',
        });
        await context.scheduleGenerator.runOnce();
        const [first] = await workOrdersOf(tenant);
        assert.equal(first!.dueAt, '2027-03-01T07:00:00.000Z');
        assert.equal((await tenant.request({ method: 'GET', url: `/api/v1/schedules/${schedule.id}` })).json().nextDueAt, null, 'nothing planned while the work order is open');

        testClock.advance(10 * 86_400_000);
        assert.equal((await tenant.request({ method: 'POST', url: `/api/v1/records/${first!.id}/start` })).statusCode, 200);
        const completed = await tenant.request({ method: 'POST', url: `/api/v1/records/${first!.id}/complete`, payload: { resolutionNotes: 'Serviced.' } });
        assert.equal(completed.statusCode, 200, completed.body);
        await context.scheduleGenerator.runOnce();
        const after = (await tenant.request({ method: 'GET', url: `/api/v1/schedules/${schedule.id}` })).json();
        assert.equal(after.nextDueAt, '2027-06-09T06:00:00.000Z', '90 days after the completion on 2027-03-11');
        const planned = await occurrencesOf(tenant, schedule.id, '?from=2027-06-01T00:00:00Z&to=2027-07-01T00:00:00Z');
        assert.deepEqual(planned.map((o) => [o.key, o.status]), [[`after:${first!.id}`, 'PLANNED']]);
      },
    );

  onEachDatabaseFromNow('records an occurrence MISSED when its template’s category was deleted, and still generates the schedules claimed with it', async ({ context, newTenant }) => {
    const tenant = await newTenant();
    const doomed = await seedCategory(tenant);
    const kept = await seedCategory(tenant);
    const body = (categoryId: string, name: string) => ({ name, template: { categoryId, description: 'x' }, triggers: [{ type: 'calendar', rrule: 'FREQ=DAILY;COUNT=1', start: '2027-03-02T08:00:00', timezone: 'UTC' }], leadTime: 'P2D' });
    const broken = await createSchedule(tenant, body(doomed, 'Broken'));
    const healthy = await createSchedule(tenant, body(kept, 'Healthy'));
    // The API refuses this delete (next test); a category can still vanish under a schedule created in
    // the same instant as its delete, which is what this safety net is for: removed at the storage level.
    await context.database.db.deleteFrom('categories').where('id', '=', doomed).execute();
    await context.scheduleGenerator.runOnce();
    const [missed] = await occurrencesOf(tenant, broken.id, '?from=2027-03-01T00:00:00Z&to=2027-03-05T00:00:00Z');
    assert.deepEqual([missed!.status, missed!.reason], ['MISSED', 'template_invalid']);
    const [generated] = await occurrencesOf(tenant, healthy.id, '?from=2027-03-01T00:00:00Z&to=2027-03-05T00:00:00Z');
    assert.equal(generated!.status, 'GENERATED');
    assert.equal(await context.scheduleGenerator.runOnce(), 0, 'nothing left due: the broken schedule does not come back each turn');
  });

  itOnEachDatabase('refuses to delete a category, asset or location a schedule’s template names (409), and deletes it once the schedule is gone', async ({ newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const create = async (url: string, payload: Record<string, unknown>) => {
      const response = await tenant.request({ method: 'POST', url, payload });
      assert.equal(response.statusCode, 201, response.body);
      return response.json().id as string;
    };
    const locationId = await create('/api/v1/locations', { name: 'Plant room' });
    const assetId = await create('/api/v1/assets', { tag: 'BLR-1', name: 'Boiler 1' });
    const schedule = await createSchedule(tenant, {
      name: 'Boiler service',
      template: { categoryId, assetId, locationId, description: 'Annual boiler service' },
      triggers: [{ type: 'calendar', rrule: 'FREQ=YEARLY', start: '2027-09-01T08:00:00', timezone: 'Europe/Berlin' }],
    });
    for (const url of [`/api/v1/categories/${categoryId}`, `/api/v1/assets/${assetId}`, `/api/v1/locations/${locationId}`]) {
      const refused = await tenant.request({ method: 'DELETE', url });
      assert.equal(refused.statusCode, 409, `${url}: ${refused.body}`);
      assert.equal(refused.json().code, 'resource_in_use');
      assert.match(refused.json().detail, new RegExp(`template of schedule ${schedule.id}`));
    }
    assert.equal((await tenant.request({ method: 'DELETE', url: `/api/v1/schedules/${schedule.id}` })).statusCode, 204);
    for (const url of [`/api/v1/categories/${categoryId}`, `/api/v1/assets/${assetId}`, `/api/v1/locations/${locationId}`]) {
      assert.equal((await tenant.request({ method: 'DELETE', url })).statusCode, 204, url);
    }
  });

  itOnEachDatabase('refuses a bad RRULE, time zone, duration or too many triggers naming the field, and stores nothing', async ({ newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const base = { name: 'Bad', template: { categoryId, description: 'x' } };
    const cases: [Record<string, unknown>, number, string][] = [
      [{ ...base, triggers: [{ type: 'calendar', rrule: 'FREQ=SOMETIMES', start: '2027-01-04T08:00:00', timezone: 'Europe/Berlin' }] }, 422, 'body.triggers.0.rrule'],
      [{ ...base, triggers: [{ type: 'calendar', rrule: 'FREQ=DAILY', start: '2027-01-04T08:00:00', timezone: 'Europe/Berln' }] }, 422, 'body.triggers.0.timezone'],
      [{ ...base, triggers: [{ type: 'interval', every: 'P1.5D' }] }, 422, 'body.triggers.0.every'],
      [{ ...base, triggers: [{ type: 'interval', every: 'P1D' }], leadTime: '7 days' }, 422, 'body.leadTime'],
      [{ ...base, triggers: [{ type: 'meter', meterId: 'mtr_01JD3Q4W8Y6V3C0M2ZP4K7N9XA', every: 500 }] }, 422, 'body.triggers.0.meterId'],
      [{ ...base, triggers: Array.from({ length: 4 }, () => ({ type: 'interval', every: 'P1D' })) }, 400, 'body.triggers'],
      [{ ...base, template: { categoryId: 'cat_01JD3Q4W8Y6V3C0M2ZP4K7N9XA', description: 'x' }, triggers: [{ type: 'interval', every: 'P1D' }] }, 422, 'body.template.categoryId'],
    ];
    for (const [body, status, field] of cases) {
      const response = await tenant.request({ method: 'POST', url: '/api/v1/schedules', payload: body });
      assert.equal(response.statusCode, status, `${field}: ${response.body}`);
      assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.ok((response.json().errors as { field: string }[]).some((e) => e.field === field), `${field} named in ${response.body}`);
    }
    assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/schedules' })).json().total, 0);
  });

  itOnEachDatabase('previews the next ten occurrences without saving, and pauses and resumes', async ({ newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const body = { name: 'Quarterly', template: { categoryId, description: 'Inspect the roof' }, triggers: [{ type: 'calendar', rrule: 'FREQ=MONTHLY;INTERVAL=3;BYMONTHDAY=-1', start: '2030-01-31T09:00:00', timezone: 'America/New_York' }], leadTime: 'P1D' };
    const preview = await tenant.request({ method: 'POST', url: '/api/v1/schedules/preview', payload: body });
    assert.equal(preview.statusCode, 200, preview.body);
    const occurrences = preview.json().occurrences as { key: string; dueAt: string; generateAt: string }[];
    assert.equal(occurrences.length, 10);
    assert.deepEqual(occurrences.slice(0, 3).map((o) => o.key), ['2030-01-31T09:00:00', '2030-04-30T09:00:00', '2030-07-31T09:00:00']);
    assert.equal(occurrences[1]!.dueAt, '2030-04-30T13:00:00.000Z', 'EDT in April');
    assert.equal(occurrences[1]!.generateAt, '2030-04-29T13:00:00.000Z');
    assert.equal((await tenant.request({ method: 'GET', url: '/api/v1/schedules' })).json().total, 0);

    const created = await createSchedule(tenant, body);
    const paused = await tenant.request({ method: 'POST', url: `/api/v1/schedules/${created.id}/pause` });
    assert.equal(paused.json().status, 'PAUSED');
    assert.deepEqual(await occurrencesOf(tenant, created.id, '?from=2030-01-01T00:00:00Z&to=2030-12-31T00:00:00Z'), [], 'a paused schedule plans nothing');
    const resumed = await tenant.request({ method: 'POST', url: `/api/v1/schedules/${created.id}/resume` });
    assert.equal(resumed.json().status, 'ACTIVE');
    assert.equal(resumed.json().nextDueAt, '2030-01-31T14:00:00.000Z');
  });
});
