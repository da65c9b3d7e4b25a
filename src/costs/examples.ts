import { EXAMPLE_IDS, examplesOf } from '../http/openapi-examples.js';
import { CostLineSchema, CreateLaborBody, CreateOtherCostBody, IssuePartBody, LaborSchema, PostCostLineBody } from './schemas.js';

const usd = (amount: string) => ({ amount, currency: 'USD' });

export const costExamples = [
  examplesOf(CreateLaborBody, {
    minutes: {
      summary: 'An hour and twenty minutes at $33.33 an hour',
      description: 'Without `rate`, the person’s `hourlyRate` prices it. `personId` is the `id` answered by createPerson.',
      value: { personId: EXAMPLE_IDS.person, minutes: 80, rate: usd('33.33'), category: 'regular', note: 'Replaced the cartridge' },
    },
  }),
  examplesOf(IssuePartBody, {
    cartridge: {
      summary: 'Two cartridges from the main storeroom',
      description: '`partId` is the `id` answered by createPart, `locationId` a location holding its stock.',
      value: { partId: EXAMPLE_IDS.part, locationId: EXAMPLE_IDS.building, quantity: '2' },
    },
  }),
  examplesOf(CreateOtherCostBody, {
    invoice: {
      summary: 'A contractor’s invoice',
      description: '`vendorId` is the `id` answered by createVendor.',
      value: { description: 'Harbour Plumbing invoice 2027-118', amount: usd('120.00'), vendorId: EXAMPLE_IDS.vendor, invoiceRef: '2027-118' },
    },
  }),
  examplesOf(PostCostLineBody, {
    posted: { summary: 'Posted in an ERP invoice', value: { erpDocumentId: 'INV-2027-0042' } },
  }),
  // Answers.
  examplesOf(LaborSchema, {
    minutes: {
      summary: '80 minutes at $33.33 an hour: exactly $44.44',
      value: {
        id: EXAMPLE_IDS.labor,
        recordId: EXAMPLE_IDS.record,
        personId: EXAMPLE_IDS.person,
        minutes: 80,
        startedAt: null,
        endedAt: null,
        rate: usd('33.33'),
        category: 'regular',
        note: 'Replaced the cartridge',
        cost: usd('44.44'),
        reversesId: null,
        postedAt: null,
        createdAt: '2027-03-02T10:15:00.000Z',
      },
    },
  }),
  examplesOf(CostLineSchema, {
    part: {
      summary: 'A part line, posted',
      value: {
        id: EXAMPLE_IDS.partLine,
        recordId: EXAMPLE_IDS.record,
        kind: 'part',
        description: '2 pcs CART-35-CER Cartridge 35 mm, ceramic',
        amount: usd('31.80'),
        minutes: null,
        quantity: '2',
        personId: null,
        partId: EXAMPLE_IDS.part,
        vendorId: null,
        reversesId: null,
        posted: true,
        postedAt: '2027-03-03T06:00:00.000Z',
        erpDocumentId: 'INV-2027-0042',
        createdAt: '2027-03-02T10:20:00.000Z',
        updatedAt: '2027-03-03T06:00:00.000Z',
      },
    },
  }),
];
