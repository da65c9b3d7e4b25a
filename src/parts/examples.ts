import { EXAMPLE_IDS, examplesOf } from '../http/openapi-examples.js';
import { CreateMovementBody, CreatePartBody, MovementList, MovementSchema, PartList, PartSchema, StockList, UpdatePartBody, type Part, type StockMovement } from './schemas.js';

const cartridge: Part = {
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
};

const receipt: StockMovement = {
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
};

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
  examplesOf(PartSchema, { cartridge: { summary: 'A part with its price and reorder point', value: cartridge } }),
  examplesOf(MovementSchema, { receive: { summary: 'A receipt in the ledger', value: receipt } }),
  examplesOf(PartList, { firstPage: { summary: 'The first page of parts, newest first', value: { parts: [cartridge], total: 1, limit: 50, offset: 0 } } }),
  examplesOf(StockList, {
    twoStorerooms: {
      summary: 'A part’s stock in two storerooms',
      description: 'The van is below the part’s reorder point: `part.below_reorder_point` was announced when it crossed it.',
      value: {
        stock: [
          { locationId: EXAMPLE_IDS.building, onHand: '18', reorderPoint: '5', updatedAt: '2027-03-02T10:20:00.000Z' },
          { locationId: 'loc_01M8TGT68T8Y0A2C4E6G8J0L2N', onHand: '1.5', reorderPoint: '5', updatedAt: '2027-03-02T11:05:00.000Z' },
        ],
        total: 2,
        limit: 50,
        offset: 0,
      },
    },
  }),
  examplesOf(MovementList, {
    ledger: {
      summary: 'A part’s ledger, newest first: an issue to a work order after the receipt',
      value: {
        movements: [
          {
            ...receipt,
            id: 'stm_01M8TGT68V7X9Z1B3D5F7H9K1M',
            type: 'issue',
            quantity: '2',
            note: null,
            recordId: EXAMPLE_IDS.record,
            costLineId: EXAMPLE_IDS.partLine,
            createdAt: '2027-03-02T10:20:00.000Z',
          },
          receipt,
        ],
        total: 2,
        limit: 50,
        offset: 0,
      },
    },
  }),
];
