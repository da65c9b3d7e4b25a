// @NOTE: the event catalogue imports this module, so it must not import events/ (no import cycle).
import { Type, type Static } from '@sinclair/typebox';
import { IdOf, Nullable, StringEnum, Text, Timestamp } from '../http/schema-types.js';
import { ListQuery, listEnvelope } from '../http/pagination.js';
import { MoneyRef } from '../money/schema.js';
import { Quantity } from '../parts/schemas.js';

export const COST_KINDS = ['labor', 'part', 'other'] as const;
export type CostKind = (typeof COST_KINDS)[number];
export const LABOR_CATEGORIES = ['regular', 'overtime', 'travel'] as const;
export type LaborCategory = (typeof LABOR_CATEGORIES)[number];

/** The longest stretch of labor one line logs: a week. */
export const MAX_LABOR_MINUTES = 7 * 24 * 60;

const lineFields = {
  reversesId: Nullable(Type.String({ description: 'On a reversing line: the line it reverses (its amounts negated). Null otherwise.' })),
  postedAt: Nullable(Type.String({ format: 'date-time', description: 'When it was posted to the ERP (`POST /cost-lines/{id}/post`); frozen from then on. Null while unposted.' })),
  createdAt: Timestamp,
};

export const LaborSchema = Type.Object(
  {
    id: IdOf('lab', 'Labor line identifier (`lab_…`), also its cost line’s.'),
    recordId: Type.String(),
    personId: Nullable(Type.String({ description: 'Who worked (`per_…`), or null.' })),
    minutes: Type.Integer({ description: 'Minutes worked (negative on a reversing line).' }),
    startedAt: Nullable(Type.String({ format: 'date-time' })),
    endedAt: Nullable(Type.String({ format: 'date-time' })),
    rate: MoneyRef('The hourly rate it was priced at.'),
    category: StringEnum(LABOR_CATEGORIES),
    note: Nullable(Type.String()),
    cost: MoneyRef('minutes × rate ÷ 60, rounded half to even to the minor unit, once, for this line.'),
    ...lineFields,
  },
  { $id: 'Labor', description: 'Time logged on a work order, priced when logged.' },
);
export type Labor = Static<typeof LaborSchema>;

export const CreateLaborBody = Type.Object(
  {
    personId: Type.Optional(IdOf('per', 'Who worked (`per_…`); their `hourlyRate` is the rate when `rate` is left out.')),
    minutes: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LABOR_MINUTES, description: 'Minutes worked; or send `startedAt` and `endedAt` instead.' })),
    startedAt: Type.Optional(Type.String({ format: 'date-time', description: 'With `endedAt`, instead of `minutes`: the minutes between them, rounded half to even to the whole minute.' })),
    endedAt: Type.Optional(Type.String({ format: 'date-time' })),
    rate: Type.Optional(MoneyRef('The hourly rate, in the organization’s currency; the person’s `hourlyRate` when left out (422 when there is neither).')),
    category: Type.Optional(StringEnum(LABOR_CATEGORIES, { description: 'regular (default), overtime or travel.' })),
    note: Type.Optional(Text(1000)),
  },
  { $id: 'CreateLaborRequest', additionalProperties: false, description: 'Time worked on the work order: `minutes`, or `startedAt` and `endedAt`.' },
);
export type CreateLaborInput = Static<typeof CreateLaborBody>;
export const LaborList = listEnvelope('labor', Type.Ref('Labor'), { $id: 'LaborList', description: 'A page of a work order’s labor lines, oldest first.' });

export const PartLineSchema = Type.Object(
  {
    id: IdOf('pln', 'Part line identifier (`pln_…`), also its cost line’s.'),
    recordId: Type.String(),
    partId: Type.String(),
    locationId: Type.String({ description: 'Where the stock was issued from (and goes back to when returned).' }),
    quantity: Type.String({ description: 'Quantity issued (negative on a reversing line).' }),
    unitCost: MoneyRef('The part’s unit cost at the moment it was issued: a later price change never reprices the line.'),
    amount: MoneyRef('quantity × unitCost, rounded half to even to the minor unit, once, for this line.'),
    ...lineFields,
  },
  { $id: 'PartLine', description: 'A part used on a work order: issued from a location’s stock at the price of that moment.' },
);
export type PartLine = Static<typeof PartLineSchema>;

export const IssuePartBody = Type.Object(
  {
    partId: IdOf('prt', 'The part (`prt_…`).'),
    locationId: IdOf('loc', 'The location (`loc_…`) whose stock it is taken from.'),
    quantity: Quantity('How much is used: positive.'),
  },
  { $id: 'IssuePartRequest', additionalProperties: false, description: 'A part used on the work order, issued from a location’s stock.' },
);
export type IssuePartInput = Static<typeof IssuePartBody>;
export const PartLineList = listEnvelope('parts', Type.Ref('PartLine'), { $id: 'PartLineList', description: 'A page of the parts used on a work order, oldest first.' });
export const PartLineParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }), lineId: Type.String({ minLength: 1, maxLength: 64 }) });

export const OtherCostSchema = Type.Object(
  {
    id: IdOf('cst', 'Cost identifier (`cst_…`), also its cost line’s.'),
    recordId: Type.String(),
    description: Type.String(),
    amount: MoneyRef(),
    vendorId: Nullable(Type.String()),
    invoiceRef: Nullable(Type.String()),
    attachmentId: Nullable(Type.String({ description: 'The invoice’s file, attached to the work order (`file_…`).' })),
    ...lineFields,
  },
  { $id: 'OtherCost', description: 'Another cost of a work order: a contractor’s invoice, a rental, a fee.' },
);
export type OtherCost = Static<typeof OtherCostSchema>;

export const CreateOtherCostBody = Type.Object(
  {
    description: Text(500, 'What it is: “Harbour Plumbing invoice 2027-118”.'),
    amount: MoneyRef('In the organization’s currency (422 `currency_mismatch`), at most its minor digits, not negative: a correction is a reversing line.'),
    vendorId: Type.Optional(IdOf('vnd', 'The vendor who invoiced it (`vnd_…`).')),
    invoiceRef: Type.Optional(Text(200, 'Their invoice number.')),
    attachmentId: Type.Optional(IdOf('file', 'The invoice’s file, attached to this work order first (`POST /records/{id}/attachments`).')),
  },
  { $id: 'CreateOtherCostRequest', additionalProperties: false, description: 'Another cost of the work order.' },
);
export type CreateOtherCostInput = Static<typeof CreateOtherCostBody>;
export const OtherCostList = listEnvelope('costs', Type.Ref('OtherCost'), { $id: 'OtherCostList', description: 'A page of a work order’s other costs, oldest first.' });

export const CostLineSchema = Type.Object(
  {
    id: Type.String({ description: 'Stable: the id of the labor line (`lab_…`), part line (`pln_…`) or other cost (`cst_…`). Use it as the line’s key in your ERP.' }),
    recordId: Type.String(),
    kind: StringEnum(COST_KINDS),
    description: Type.String({ description: 'A line of text for the ERP document.' }),
    amount: MoneyRef('What the line costs; negative on a reversing line.'),
    minutes: Nullable(Type.Integer({ description: 'Labor: minutes worked.' })),
    quantity: Nullable(Type.String({ description: 'Part: quantity used.' })),
    personId: Nullable(Type.String()),
    partId: Nullable(Type.String()),
    vendorId: Nullable(Type.String()),
    reversesId: Nullable(Type.String({ description: 'On a reversing line: the line it reverses.' })),
    posted: Type.Boolean(),
    postedAt: Nullable(Type.String({ format: 'date-time' })),
    erpDocumentId: Nullable(Type.String({ description: 'The ERP document it was posted as.' })),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'CostLine', description: 'One line of a work order’s costs as the ERP posts it. A posted line never changes again; a correction is a new reversing line.' },
);
export type CostLine = Static<typeof CostLineSchema>;

export const CostLineListQuery = ListQuery({
  posted: Type.Optional(Type.Boolean({ description: 'false: only lines not posted yet (the ERP’s to-do list); true: only posted ones.' })),
  recordId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only the lines of this work order.' })),
  updatedAfter: Type.Optional(Type.String({ format: 'date-time', description: 'Only lines created or posted at or after this instant (incremental sync).' })),
});
export type CostLineListQuery = Static<typeof CostLineListQuery>;
export const CostLineList = listEnvelope('costLines', Type.Ref('CostLine'), { $id: 'CostLineList', description: 'A page of cost lines, oldest change first (updatedAt, then id).' });

export const PostCostLineBody = Type.Object(
  { erpDocumentId: Text(200, 'Your ERP’s document (invoice, journal entry) the line was posted in. Posting again with the same one answers the line as posted; with another one, 409 `cost_line_posted`.') },
  { $id: 'PostCostLineRequest', additionalProperties: false, description: 'The ERP confirms it posted the line.' },
);
export type PostCostLineInput = Static<typeof PostCostLineBody>;

/** This feature's named schemas: registered once with the app, emitted as OpenAPI components. */
export const costComponents = [LaborSchema, CreateLaborBody, LaborList, PartLineSchema, IssuePartBody, PartLineList, OtherCostSchema, CreateOtherCostBody, OtherCostList, CostLineSchema, CostLineList, PostCostLineBody];
