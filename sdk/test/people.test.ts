import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { ProblemError } from '@work-order-api/client';
import { itAgainstLiveService, workOrderBody } from './live-service.js';

describe('the SDK with people, teams, vendors and access links', () => {
  itAgainstLiveService('assigns a work order to a vendor and a team, lists it by a member, and makes and revokes a link', async ({ client, baseUrl }) => {
    const category = await client.createCategory({ body: { name: 'Plumbing' } });
    const ana = await client.createPerson({ body: { name: 'Ana Ruiz', trades: ['plumbing'], hourlyRate: { amount: '42.5', currency: 'USD' } } });
    assert.deepEqual(ana.hourlyRate, { amount: '42.50', currency: 'USD' });
    const crew = await client.createTeam({ body: { name: 'Wet crew', memberIds: [ana.id] } });
    const acme = await client.createVendor({ body: { name: 'Acme Plumbing', trades: ['plumbing'] } });
    const leak = await client.createRecord({ body: { ...workOrderBody(category.id), assignees: [{ type: 'vendor', id: acme.id }] } });
    const assigned = await client.assignRecord({ path: { id: leak.id }, body: { assignees: [{ type: 'vendor', id: acme.id }, { type: 'team', id: crew.id }] } });
    assert.deepEqual(assigned.assignees.map((assignee) => assignee.name), ['Acme Plumbing', 'Wet crew']);
    const plate = await client.listRecords({ query: { assigneeId: ana.id } });
    assert.deepEqual(plate.records.map((record) => record.id), [leak.id]);
    assert.equal((await client.listVendors({ query: { trade: 'Plumbing' } })).total, 1);

    const link = await client.createRecordAccessLink({ path: { id: leak.id }, body: { vendorId: acme.id, expiresIn: 'P7D' } });
    assert.equal((await fetch(`${baseUrl}${new URL(link.url).pathname}`)).status, 200);
    const { accessLinks } = await client.listRecordAccessLinks({ path: { id: leak.id } });
    assert.deepEqual(accessLinks.map((listed) => [listed.id, listed.state]), [[link.id, 'active']]);
    await client.revokeRecordAccessLink({ path: { id: leak.id, linkId: link.id } });
    assert.equal((await fetch(`${baseUrl}${new URL(link.url).pathname}`)).status, 404);

    await assert.rejects(client.deleteVendor({ path: { id: acme.id } }), (error) => error instanceof ProblemError && error.code === 'in_use');
    await assert.rejects(
      client.updatePerson({ path: { id: ana.id }, body: { hourlyRate: { amount: '40.00', currency: 'EUR' } } }),
      (error) => error instanceof ProblemError && error.code === 'currency_mismatch',
    );
  });
});
