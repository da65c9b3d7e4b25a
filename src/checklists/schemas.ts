import { Type, type Static } from '@sinclair/typebox';
import { IdOf, StringEnum, Text, Timestamp } from '../http/schema-types.js';
import { ListQuery, listEnvelope } from '../http/pagination.js';
import { PrioritySchema } from '../records/schemas.js';

export const ITEM_TYPES = ['checkbox', 'pass_fail', 'number', 'text', 'select', 'photo', 'signature', 'meter_reading'] as const;
export type ItemType = (typeof ITEM_TYPES)[number];

/** At most this many items on one checklist; a completion's statement carries every answer. */
export const MAX_ITEMS = 100;

export const OnFailSchema = Type.Object(
  {
    categoryId: IdOf('cat', 'Category of the follow-up work order (`cat_…`).'),
    priority: Type.Optional(PrioritySchema),
    description: Type.Optional(Text(5000, 'What the follow-up work order asks for; by default it names the failed item.')),
  },
  { additionalProperties: false, description: 'A failed answer creates exactly one follow-up work order with these fields.' },
);

export const ChecklistItemSchema = Type.Object(
  {
    key: Type.String({ pattern: '^[a-z][a-z0-9_]{0,39}$', description: 'Names the item in answers (`PUT …/items/{key}`), unique in the checklist; keep it across versions.' }),
    label: Text(500, 'What the technician reads.'),
    type: StringEnum(ITEM_TYPES, {
      description:
        'checkbox (true/false), pass_fail ("pass"/"fail"), number (within min–max or failed), text, select (one of options), photo ({attachmentIds}), signature ({name, attachmentId}), meter_reading ({value}: posted to meterId).',
    }),
    required: Type.Optional(Type.Boolean({ description: 'Completion waits for an answer (409 `checklist_incomplete`). false unless given.' })),
    min: Type.Optional(Type.Number({ description: 'number and meter_reading: an answer below is failed.' })),
    max: Type.Optional(Type.Number({ description: 'number and meter_reading: an answer above is failed.' })),
    unit: Type.Optional(Text(20, 'number and meter_reading: the unit people read (bar, °C).')),
    options: Type.Optional(Type.Array(Text(100), { minItems: 1, maxItems: 50, uniqueItems: true, description: 'select: the choices.' })),
    meterId: Type.Optional(IdOf('mtr', 'meter_reading: the meter the reading is posted to (`mtr_…`).')),
    onFail: Type.Optional(OnFailSchema),
  },
  { $id: 'ChecklistItem', additionalProperties: false, description: 'One typed item of a checklist.' },
);
export type ChecklistItem = Static<typeof ChecklistItemSchema>;

const Items = Type.Array(Type.Ref('ChecklistItem'), { minItems: 1, maxItems: MAX_ITEMS, description: 'The items, in the order they are asked.' });

export const ChecklistSchema = Type.Object(
  {
    id: IdOf('chk', 'Checklist identifier (`chk_…`).'),
    name: Type.String(),
    version: Type.Integer({ description: 'Increases with every PATCH; a work order keeps the version it was given. The ETag is this number in quotes.' }),
    items: Type.Array(Type.Ref('ChecklistItem')),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Checklist', description: 'A versioned checklist template: typed items work orders are given and answer.' },
);
export type Checklist = Omit<Static<typeof ChecklistSchema>, 'items'> & { items: ChecklistItem[] };

export const CreateChecklistBody = Type.Object({ name: Text(200), items: Items }, { $id: 'CreateChecklistRequest', additionalProperties: false, description: 'A new checklist, at version 1.' });
export type CreateChecklistInput = { name: string; items: ChecklistItem[] };

export const UpdateChecklistBody = Type.Object(
  { name: Type.Optional(Text(200)), items: Type.Optional(Items) },
  { $id: 'UpdateChecklistRequest', additionalProperties: false, minProperties: 1, description: 'A new version: the name and items given replace the current ones.' },
);
export type UpdateChecklistInput = { name?: string; items?: ChecklistItem[] };

export const ChecklistListQuery = ListQuery({});
export const ChecklistList = listEnvelope('checklists', Type.Ref('Checklist'), { $id: 'ChecklistList', description: 'A page of checklists, newest first.' });

export const AnswerBody = Type.Object(
  { value: Type.Unknown({ description: 'Of the item’s type: true/false, "pass"/"fail", a number, a text, an option, {attachmentIds: [...]}, {name, attachmentId}, {value} (meter_reading).' }) },
  { $id: 'ChecklistAnswerRequest', additionalProperties: false, required: ['value'], description: 'The answer to one item; answering again replaces it.' },
);

export const AnswerSchema = Type.Object(
  {
    key: Type.String(),
    value: Type.Unknown({ description: 'The answer as given.' }),
    failed: Type.Boolean({ description: 'pass_fail answered fail, or a number outside min–max.' }),
    answeredBy: Type.String({ description: 'Who answered, as history names actors.' }),
    answeredAt: Timestamp,
    followUpRecordId: Type.Optional(Type.String({ description: 'The follow-up work order a failed item with `onFail` created (`rec_…`).' })),
  },
  { $id: 'ChecklistAnswer', description: 'The answer to one item of a work order’s checklist.' },
);
export type Answer = Static<typeof AnswerSchema>;

export const RecordChecklistViewSchema = Type.Object(
  {
    checklistId: Type.String(),
    version: Type.Integer({ description: 'The version the work order was given.' }),
    name: Type.String(),
    items: Type.Array(Type.Ref('ChecklistItem'), { description: 'The items of that version.' }),
    answers: Type.Array(Type.Ref('ChecklistAnswer'), { description: 'The answered items, in the checklist’s order.' }),
    missing: Type.Array(Type.String(), { description: 'Keys of required items not answered yet: completion waits for them.' }),
  },
  { $id: 'WorkOrderChecklist', description: 'A checklist of a work order, at the version it was given, with its answers.' },
);
export type RecordChecklistView = Omit<Static<typeof RecordChecklistViewSchema>, 'items' | 'answers'> & { items: ChecklistItem[]; answers: Answer[] };

export const RecordChecklistList = Type.Object({ checklists: Type.Array(Type.Ref('WorkOrderChecklist')) }, { $id: 'WorkOrderChecklistList', description: 'The checklists of a work order.' });

export const AttachChecklistBody = Type.Object(
  { checklistId: IdOf('chk', 'The checklist (`chk_…`), given at its current version.') },
  { $id: 'AttachChecklistRequest', additionalProperties: false, description: 'Gives an open work order one more checklist.' },
);

export const checklistComponents = [ChecklistItemSchema, ChecklistSchema, CreateChecklistBody, UpdateChecklistBody, ChecklistList, AnswerBody, AnswerSchema, RecordChecklistViewSchema, RecordChecklistList, AttachChecklistBody];
