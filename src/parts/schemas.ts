// @NOTE: the event catalogue imports this module, so it must not import events/ (no import cycle).
import { Type, type Static } from '@sinclair/typebox';
import { IdOf, Nullable, optionalExcept, StringEnum, Text, Timestamp } from '../http/schema-types.js';
import { ListQuery, listEnvelope } from '../http/pagination.js';
import { MoneyRef } from '../money/schema.js';
import { QUANTITY_PATTERN } from './quantity.js';

export const MOVEMENT_TYPES = ['receive', 'adjust', 'transfer', 'issue', 'return'] as const;
export type MovementType = (typeof MOVEMENT_TYPES)[number];

/** A quantity of stock: a decimal string with at most 3 decimals, never a float. */
export function Quantity(description: string) {
  return Type.String({ minLength: 1, maxLength: 20, pattern: QUANTITY_PATTERN, description: `${description} A decimal string with at most 3 decimals (\`"2"\`, \`"0.25"\`), never a JSON number.`, examples: ['2'] });
}

const fields = {
  sku: Text(100, 'Your stock-keeping unit: unique in your organization (409 `already_exists` otherwise).'),
  name: Text(200, 'What the part is: “Cartridge 35 mm, ceramic”.'),
  unit: Text(20, 'What a quantity of 1 is: `pcs`, `m`, `l`, `kg`.'),
  unitCost: MoneyRef('What one unit costs now, in the organization’s currency. A part issued to a work order keeps the unit cost of that moment: changing this never reprices it.'),
  reorderPoint: Nullable(Quantity('Below this on hand at a location, `part.below_reorder_point` fires (once per crossing); null for none.')),
  active: Type.Boolean({ description: 'An inactive part cannot be issued or received; its stock and history stay.' }),
};

export const PartSchema = Type.Object(
  {
    id: IdOf('prt', 'Part identifier (`prt_…`).'),
    sku: Type.String(),
    name: Type.String(),
    unit: Type.String(),
    unitCost: MoneyRef(),
    reorderPoint: Nullable(Type.String()),
    active: Type.Boolean(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    version: Type.Integer({ description: 'Increases with every change; the ETag is this number in quotes.' }),
  },
  { $id: 'Part', description: 'A part kept in stock, with its price and reorder point; its stock is per location (`GET /parts/{id}/stock`).' },
);
export type Part = Static<typeof PartSchema>;

export const CreatePartBody = Type.Object(optionalExcept(fields, ['sku', 'name', 'unit', 'unitCost']), { $id: 'CreatePartRequest', additionalProperties: false, description: 'A new part (active unless said otherwise).' });
export type CreatePartInput = Static<typeof CreatePartBody>;

export const UpdatePartBody = Type.Object(optionalExcept(fields), { $id: 'UpdatePartRequest', additionalProperties: false, minProperties: 1, description: 'Fields to change; null clears `reorderPoint`.' });
export type UpdatePartInput = Static<typeof UpdatePartBody>;

export const PartListQuery = ListQuery({
  sku: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only the part with this sku.' })),
  active: Type.Optional(Type.Boolean({ description: 'Only active (true) or inactive (false) parts.' })),
  updatedAfter: Type.Optional(Type.String({ format: 'date-time', description: 'Only parts changed at or after this instant (incremental sync).' })),
});
export type PartListQuery = Static<typeof PartListQuery>;
export const PartList = listEnvelope('parts', Type.Ref('Part'), { $id: 'PartList', description: 'A page of parts, newest first.' });

export const StockLevelSchema = Type.Object(
  {
    locationId: Type.String({ description: 'The location (`loc_…`): a storeroom, a van, a site.' }),
    onHand: Type.String({ description: 'On hand there, exactly (a decimal string); never negative.' }),
    reorderPoint: Nullable(Type.String({ description: 'The part’s reorder point.' })),
    updatedAt: Timestamp,
  },
  { $id: 'StockLevel', description: 'A part’s stock at one location, kept in step with its ledger.' },
);
export const StockList = listEnvelope('stock', Type.Ref('StockLevel'), { $id: 'StockLevelList', description: 'A part’s stock at each location that ever held it, by location id.' });

export const MovementSchema = Type.Object(
  {
    id: IdOf('stm', 'Movement identifier (`stm_…`).'),
    partId: Type.String(),
    type: StringEnum(MOVEMENT_TYPES),
    locationId: Type.String({ description: 'Where the stock was received, adjusted, issued or returned; a transfer’s source.' }),
    toLocationId: Nullable(Type.String({ description: 'A transfer’s destination; null for the other types.' })),
    quantity: Type.String({ description: 'How much moved: positive, except an adjustment’s, whose sign says which way.' }),
    unitCost: MoneyRef('The unit cost it moved at: for an issue, the part’s unit cost at that moment.'),
    recordId: Nullable(Type.String({ description: 'The work order an issue or return was for (`POST|DELETE /records/{id}/parts`).' })),
    costLineId: Nullable(Type.String({ description: 'The work order’s part line (`pln_…`) the issue or return belongs to.' })),
    note: Nullable(Type.String()),
    createdAt: Timestamp,
  },
  { $id: 'StockMovement', description: 'One row of a part’s append-only ledger: never changed or deleted.' },
);
export type StockMovement = Static<typeof MovementSchema>;

export const CreateMovementBody = Type.Object(
  {
    type: StringEnum(MOVEMENT_TYPES, { description: 'receive (stock in), adjust (a count’s correction, signed), transfer (to `toLocationId`), issue (stock used outside a work order), return (stock back).' }),
    locationId: IdOf('loc', 'The location (`loc_…`) of your organization.'),
    toLocationId: Type.Optional(IdOf('loc', 'A transfer’s destination (required for a transfer, refused otherwise).')),
    quantity: Quantity('How much: positive; an adjustment’s may be negative.'),
    unitCost: Type.Optional(MoneyRef('A receipt’s unit cost (the part’s own when left out); the other types move at the part’s unit cost.')),
    note: Type.Optional(Text(1000, 'Why: the delivery note, the count.')),
  },
  { $id: 'CreateStockMovementRequest', additionalProperties: false, description: 'A movement of stock. Parts used on a work order are issued with `POST /records/{id}/parts`, which prices them on the work order.' },
);
export type CreateMovementInput = Static<typeof CreateMovementBody>;

export const MovementListQuery = ListQuery({});
export const MovementList = listEnvelope('movements', Type.Ref('StockMovement'), { $id: 'StockMovementList', description: 'A page of a part’s ledger, newest first.' });

/** This feature's named schemas: registered once with the app, emitted as OpenAPI components. */
export const partComponents = [PartSchema, CreatePartBody, UpdatePartBody, PartList, StockLevelSchema, StockList, MovementSchema, CreateMovementBody, MovementList];
