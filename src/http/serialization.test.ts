import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import { referencedSchemas, responseSerializers } from './serialization.js';

const named = {
  Money: { $id: 'Money', type: 'object', properties: { amount: { type: 'integer' }, currency: { type: 'string' } } },
  Line: { $id: 'Line', type: 'object', properties: { price: { $ref: 'Money' }, note: { type: 'string' } } },
  Order: { $id: 'Order', type: 'object', properties: { lines: { type: 'array', items: { $ref: 'Line#' } }, total: { $ref: 'Money' } } },
  Unused: { $id: 'Unused', type: 'object', properties: { x: { type: 'string' } } },
};

describe('response serializers with only the named schemas they use', () => {
  it('finds the schemas a response refers to, through the ones they refer to, and leaves out the rest and its own id', () => {
    assert.deepEqual(Object.keys(referencedSchemas({ $ref: 'Order' }, named)).sort(), ['Line', 'Money', 'Order']);
    assert.deepEqual(Object.keys(referencedSchemas(named.Order, named, 'Order')).sort(), ['Line', 'Money']);
    assert.deepEqual(Object.keys(referencedSchemas({ type: 'object', properties: { a: { type: 'string' } } }, named)), []);
    assert.deepEqual(Object.keys(referencedSchemas({ anyOf: [{ $ref: 'Unknown' }, { $ref: 'toString' }, { $ref: 'Money#/properties/amount' }] }, named)), ['Money']);
  });

  it('serializes nested named schemas as declared: unknown properties dropped, every level kept', async () => {
    const app = Fastify({ schemaController: { compilersFactory: { buildSerializer: responseSerializers } } });
    for (const schema of Object.values(named)) app.addSchema(schema);
    app.get('/order', { schema: { response: { 200: { $ref: 'Order' } } } }, async () => ({
      lines: [{ price: { amount: 250, currency: 'EUR', secret: 'x' }, note: 'tap', internal: true }],
      total: { amount: 250, currency: 'EUR' },
      leaked: 'never',
    }));
    // A plugin that adds a named schema of its own gets serializers built with its context's schemas.
    await app.register(async (plugin) => {
      plugin.addSchema({ $id: 'Receipt', type: 'object', properties: { order: { $ref: 'Order' }, paid: { type: 'boolean' } } });
      plugin.get('/receipt', { schema: { response: { 200: { $ref: 'Receipt' } } } }, async () => ({ order: { lines: [], total: { amount: 0, currency: 'EUR', x: 1 } }, paid: true, y: 2 }));
    });
    const receipt = await app.inject({ method: 'GET', url: '/receipt' });
    assert.deepEqual(receipt.json(), { order: { lines: [], total: { amount: 0, currency: 'EUR' } }, paid: true });
    const answer = await app.inject({ method: 'GET', url: '/order' });
    assert.equal(answer.statusCode, 200);
    assert.deepEqual(answer.json(), { lines: [{ price: { amount: 250, currency: 'EUR' }, note: 'tap' }], total: { amount: 250, currency: 'EUR' } });
    await app.close();
  });
});
