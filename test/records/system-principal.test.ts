import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { systemPrincipal } from '../../src/principal.js';
import { itOnEachDatabase, seedCategory } from '../helpers/test-app.js';

describe('the service acting on its own behalf', () => {
  itOnEachDatabase('names a schedule as the actor of the work order it creates and moves, in the history and in the proof', async ({ context, newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const schedule = systemPrincipal(tenant.orgId, { type: 'schedule', id: 'sch_01JZ8Q0000000000000000TEST' });
    const created = await context.records.create(schedule, { categoryId, address: '1 Boiler Rd', requesterName: 'Planner', description: 'Monthly filter change', assignee: 'HVAC team' });
    await context.records.act(schedule, created.id, 'start', {});
    await context.records.act(schedule, created.id, 'complete', { resolutionNotes: 'Filter changed.' });

    const history = await tenant.request({ method: 'GET', url: `/api/v1/records/${created.id}/events` });
    assert.equal(history.statusCode, 200, history.body);
    const entries = history.json().events as { action: string; actor: { type: string; id: string } }[];
    assert.deepEqual(
      entries.map((entry) => [entry.action, entry.actor]),
      ['created', 'start', 'complete'].map((action) => [action, { type: 'schedule', id: 'sch_01JZ8Q0000000000000000TEST' }]),
    );

    await context.proofs.log.sealPending();
    const proof = await tenant.request({ method: 'GET', url: `/api/v1/records/${created.id}/proof` });
    assert.equal(proof.statusCode, 200, proof.body);
    const statement = JSON.parse(Buffer.from(proof.json().jws.split('.')[1], 'base64url').toString('utf8')) as { history: { actor: string }[] };
    assert.deepEqual(
      statement.history.map((entry) => entry.actor),
      ['schedule:sch_01JZ8Q0000000000000000TEST', 'schedule:sch_01JZ8Q0000000000000000TEST', 'schedule:sch_01JZ8Q0000000000000000TEST'],
    );
  });

  itOnEachDatabase('keeps an API key’s changes attributed to the key beside an intake form’s and a link’s', async ({ context, newTenant }) => {
    const tenant = await newTenant();
    const categoryId = await seedCategory(tenant);
    const intake = systemPrincipal(tenant.orgId, { type: 'intake', id: 'itk_01JZ8Q00000000000000INTAKE' });
    const link = systemPrincipal(tenant.orgId, { type: 'link', id: 'lnk_01JZ8Q000000000000000LINK' });
    const created = await context.records.create(intake, { categoryId, address: 'Unit 4', requesterName: 'Tenant', description: 'Kitchen tap leaks' });
    const assigned = await tenant.request({ method: 'POST', url: `/api/v1/records/${created.id}/assign`, payload: { assignee: 'Acme Plumbing' } });
    assert.equal(assigned.statusCode, 200, assigned.body);
    await context.records.act(link, created.id, 'start', {});
    const history = (await tenant.request({ method: 'GET', url: `/api/v1/records/${created.id}/events` })).json().events as { actor: unknown }[];
    assert.deepEqual(
      history.map((entry) => entry.actor),
      [
        { type: 'intake', id: 'itk_01JZ8Q00000000000000INTAKE' },
        { type: 'api_key', id: tenant.keyId },
        { type: 'link', id: 'lnk_01JZ8Q000000000000000LINK' },
      ],
    );
  });
});
