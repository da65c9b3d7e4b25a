import { EXAMPLE_IDS, examplesOf } from '../http/openapi-examples.js';
import {
  CostLineList,
  CostLineSchema,
  CreateLaborBody,
  CreateOtherCostBody,
  IssuePartBody,
  LaborList,
  LaborSchema,
  OtherCostList,
  OtherCostSchema,
  PartLineList,
  PartLineSchema,
  PostCostLineBody,
  type CostLine,
  type Labor,
  type OtherCost,
  type PartLine,
} from './schemas.js';

const usd = (amount: string) => ({ amount, currency: 'USD' });
const page = { limit: 50, offset: 0 };

const labor: Labor = {
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
};

const partLine: PartLine = {
  id: EXAMPLE_IDS.partLine,
  recordId: EXAMPLE_IDS.record,
  partId: EXAMPLE_IDS.part,
  locationId: EXAMPLE_IDS.building,
  quantity: '2',
  unitCost: usd('15.90'),
  amount: usd('31.80'),
  reversesId: null,
  postedAt: null,
  createdAt: '2027-03-02T10:20:00.000Z',
};

const invoice: OtherCost = {
  id: EXAMPLE_IDS.otherCost,
  recordId: EXAMPLE_IDS.record,
  description: 'Harbour Plumbing invoice 2027-118',
  amount: usd('120.00'),
  vendorId: EXAMPLE_IDS.vendor,
  invoiceRef: '2027-118',
  attachmentId: null,
  reversesId: null,
  postedAt: null,
  createdAt: '2027-03-04T09:00:00.000Z',
};

const postedPartLine: CostLine = {
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
};

const unpostedLines: CostLine[] = [
  {
    ...postedPartLine,
    id: EXAMPLE_IDS.labor,
    kind: 'labor',
    description: 'Replaced the cartridge',
    amount: usd('44.44'),
    minutes: 80,
    quantity: null,
    personId: EXAMPLE_IDS.person,
    partId: null,
    posted: false,
    postedAt: null,
    erpDocumentId: null,
    createdAt: '2027-03-02T10:15:00.000Z',
    updatedAt: '2027-03-02T10:15:00.000Z',
  },
  {
    ...postedPartLine,
    id: EXAMPLE_IDS.otherCost,
    kind: 'other',
    description: 'Harbour Plumbing invoice 2027-118',
    amount: usd('120.00'),
    quantity: null,
    partId: null,
    vendorId: EXAMPLE_IDS.vendor,
    posted: false,
    postedAt: null,
    erpDocumentId: null,
    createdAt: '2027-03-04T09:00:00.000Z',
    updatedAt: '2027-03-04T09:00:00.000Z',
  },
];

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
  examplesOf(LaborSchema, { minutes: { summary: '80 minutes at $33.33 an hour: exactly $44.44', value: labor } }),
  examplesOf(PartLineSchema, { cartridge: { summary: 'Two cartridges at $15.90, the price of the moment they were issued', value: partLine } }),
  examplesOf(OtherCostSchema, { invoice: { summary: 'A contractor’s invoice', value: invoice } }),
  examplesOf(CostLineSchema, { part: { summary: 'A part line, posted', value: postedPartLine } }),
  examplesOf(LaborList, { firstPage: { summary: 'A work order’s labor, oldest first', value: { labor: [labor], total: 1, ...page } } }),
  examplesOf(PartLineList, { firstPage: { summary: 'The parts used on a work order, oldest first', value: { parts: [partLine], total: 1, ...page } } }),
  examplesOf(OtherCostList, { firstPage: { summary: 'A work order’s other costs, oldest first', value: { costs: [invoice], total: 1, ...page } } }),
  examplesOf(CostLineList, {
    unposted: {
      summary: 'The ERP’s to-do list: GET /cost-lines?posted=false',
      description: 'Post each line in your ERP, then `POST /cost-lines/{id}/post` with its document. A posted line leaves this list, so read it again from `offset=0` until `total` is 0.',
      value: { costLines: unpostedLines, total: 2, ...page },
    },
  }),
];
