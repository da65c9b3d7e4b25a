// @NOTE: the event catalogue imports this module, so it must not import events/ (no import cycle).
import { Type, type Static } from '@sinclair/typebox';
import { IdOf, Nullable, optionalExcept, StringEnum, Text, Timestamp } from '../http/schema-types.js';
import { ListQuery, listEnvelope } from '../http/pagination.js';

export const METER_KINDS = ['cumulative', 'gauge'] as const;
export type MeterKind = (typeof METER_KINDS)[number];

/** Readings one POST may carry. */
export const MAX_READINGS_PER_BATCH = 1_000;
/** How far ahead of the server's clock a reading's `readAt` may lie (clock skew of the sender). */
export const MAX_READING_LEAD_MS = 5 * 60_000;

/** Each field a meter's creator sets and PATCH changes, in the order both bodies list them. */
const fields = {
  name: Text(200, 'What the meter measures: “Run hours”, “Supply temperature”.'),
  assetId: Nullable(IdOf('ast', 'The asset the meter is on (`ast_…`); null for a meter on no asset.')),
  unit: Text(50, 'The unit of its readings, as people write it: `h`, `km`, `°C`, `kWh`.'),
};

const KindSchema = StringEnum(METER_KINDS, {
  description: 'cumulative: a counter that only goes up (run hours, odometer, energy), except at a reading marked `reset`; gauge: a level that goes up and down (temperature, pressure). Never changes after create.',
});

export const LastReadingSchema = Type.Object(
  { value: Type.Number(), readAt: Timestamp },
  { description: 'The meter’s reading with the latest `readAt` (not the last one received: late readings are placed by their `readAt`).' },
);

export const MeterSchema = Type.Object(
  {
    id: IdOf('mtr', 'Meter identifier (`mtr_…`).'),
    name: Type.String(),
    assetId: Nullable(Type.String()),
    unit: Type.String(),
    kind: KindSchema,
    lastReading: Nullable(LastReadingSchema),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    version: Type.Integer({ description: 'Increases with every change, a new `lastReading` included; the ETag is this number in quotes.' }),
  },
  { $id: 'Meter', description: 'Something measured on an asset (run hours, a temperature): preventive maintenance’s meter and threshold triggers read it.' },
);
export type Meter = Static<typeof MeterSchema>;

export const CreateMeterBody = Type.Object(
  { ...optionalExcept(fields, ['name', 'unit']), kind: KindSchema },
  { $id: 'CreateMeterRequest', additionalProperties: false, description: 'A new meter.' },
);
export type CreateMeterInput = Static<typeof CreateMeterBody>;

export const UpdateMeterBody = Type.Object(optionalExcept(fields), {
  $id: 'UpdateMeterRequest',
  additionalProperties: false,
  minProperties: 1,
  description: 'Fields to change; null clears `assetId`. `kind` never changes (a PATCH naming it is refused).',
});
export type UpdateMeterInput = Static<typeof UpdateMeterBody>;

export const MeterListQuery = ListQuery({
  assetId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only the meters on this asset.' })),
  updatedAfter: Type.Optional(
    Type.String({ format: 'date-time', description: 'Only meters changed (a new `lastReading` included) at or after this instant (incremental sync; deletions come as `meter.deleted` events).' }),
  ),
});
export type MeterListQuery = Static<typeof MeterListQuery>;

export const MeterList = listEnvelope('meters', Type.Ref('Meter'), { $id: 'MeterList', description: 'A page of meters, newest first.' });

export const MeterReadingSchema = Type.Object(
  {
    id: IdOf('rdg', 'Reading identifier (`rdg_…`).'),
    meterId: Type.String(),
    value: Type.Number(),
    readAt: Timestamp,
    externalId: Nullable(Type.String()),
    reset: Type.Boolean({ description: 'True when this reading restarted a cumulative meter’s count.' }),
    createdAt: Timestamp,
  },
  { $id: 'MeterReading', description: 'One reading of a meter.' },
);
export type MeterReading = Static<typeof MeterReadingSchema>;

export const NewReadingSchema = Type.Object(
  {
    value: Type.Number({ description: 'The reading: any finite number, in the meter’s unit.' }),
    readAt: Type.Optional(Type.String({ format: 'date-time', description: 'When it was read; now if absent. At most 5 minutes ahead of the server’s clock.' })),
    externalId: Type.Optional(Text(200, 'Your identifier of the reading (the device’s sequence number, the message id): a reading whose externalId the meter already has is a duplicate, not counted again.')),
    reset: Type.Optional(Type.Boolean({ description: 'A cumulative meter restarted its count (replaced, rolled over) at this reading: it may be lower than the one before.' })),
  },
  { additionalProperties: false },
);

export const PostReadingsBody = Type.Object(
  { readings: Type.Array(NewReadingSchema, { minItems: 1, maxItems: MAX_READINGS_PER_BATCH, description: '1 to 1,000 readings, stored together or not at all.' }) },
  { $id: 'PostMeterReadingsRequest', additionalProperties: false, description: 'Readings of one meter, in any order.' },
);
export type PostReadingsInput = Static<typeof PostReadingsBody>;

export const ReadingOutcomeSchema = Type.Object(
  {
    status: StringEnum(['accepted', 'duplicate'] as const, { description: 'accepted: stored now; duplicate: its externalId was already stored (or came earlier in this batch), nothing stored.' }),
    reading: Type.Ref('MeterReading', { description: 'The reading stored: this one, or for a duplicate the one stored first under its externalId.' }),
  },
  { description: 'What became of one item of the batch, at its position.' },
);

export const PostReadingsAnswer = Type.Object(
  {
    accepted: Type.Integer({ minimum: 0, description: 'Readings stored by this request.' }),
    duplicates: Type.Integer({ minimum: 0, description: 'Readings not stored because their externalId was already known.' }),
    readings: Type.Array(ReadingOutcomeSchema, { description: 'One entry per item sent, in the order sent.' }),
    meter: Type.Ref('Meter', { description: 'The meter after the batch, with its new lastReading.' }),
  },
  { $id: 'MeterReadingsResult', description: 'What a batch of readings did.' },
);
export type PostReadingsAnswer = Static<typeof PostReadingsAnswer>;

export const ReadingListQuery = ListQuery({});
export const MeterReadingList = listEnvelope('readings', Type.Ref('MeterReading'), { $id: 'MeterReadingList', description: 'A page of a meter’s readings, newest first by readAt.' });

/** This feature's named schemas: registered once with the app, emitted as OpenAPI components. */
export const meterComponents = [MeterSchema, CreateMeterBody, UpdateMeterBody, MeterList, MeterReadingSchema, PostReadingsBody, PostReadingsAnswer, MeterReadingList];
