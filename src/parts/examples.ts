import { EXAMPLE_IDS, examplesOf } from '../http/openapi-examples.js';
import { CreateMovementBody, CreatePartBody, MovementSchema, PartSchema, UpdatePartBody } from './schemas.js';

export const partExamples = [
  examplesOf(CreatePartBody, {
    cartridge: {
      summary: 'A tap cartridge kept in the storerooms',
      description: 'In your organization’s currency (USD unless it was set otherwise: `wo orgs create … --currency EUR`).',
      value: { sku: 'CART-35-CER', name: 'Cartridge 35 mm, ceramic', unit: 'pcs', unitCost: { amount: '15.90', currency: 'USD' }, reorderPoint: '5' },
    },
  }),
  examplesOf(UpdatePartBody, {
    newPrice: { summary: 'A new price from the wholesaler', description: 'Parts already issued to work orders keep the price they were issued at.', value: { unitCost: { amount: '16.40', currency: 'USD' } } },
  }),
  examplesOf(CreateMovementBody, {
    receive: {
      summary: 'Twenty cartridges received into the main storeroom',
      description: '`locationId` is the `id` answered by createLocation.',
      value: { type: 'receive', locationId: EXAMPLE_IDS.building, quantity: '20', unitCost: { amount: '15.90', currency: 'USD' }, note: 'Delivery note 7781' },
    },
  }),
  // Answers.
  examplesOf(PartSchema, {
    cartridge: {
      summary: 'A part with its price and reorder point',
      value: {
        id: EXAMPLE_IDS.part,
        sku: 'CART-35-CER',
        name: 'Cartridge 35 mm, ceramic',
        unit: 'pcs',
        unitCost: { amount: '15.90', currency: 'USD' },
        reorderPoint: '5',
        active: true,
        createdAt: '2027-03-01T08:00:00.000Z',
        updatedAt: '2027-03-01T08:00:00.000Z',
        version: 1,
      },
    },
  }),
  examplesOf(MovementSchema, {
    receive: {
      summary: 'A receipt in the ledger',
      value: {
        id: EXAMPLE_IDS.movement,
        partId: EXAMPLE_IDS.part,
        type: 'receive',
        locationId: EXAMPLE_IDS.building,
        toLocationId: null,
        quantity: '20',
        unitCost: { amount: '15.90', currency: 'USD' },
        recordId: null,
        costLineId: null,
        note: 'Delivery note 7781',
        createdAt: '2027-03-01T08:05:00.000Z',
      },
    },
  }),
];
