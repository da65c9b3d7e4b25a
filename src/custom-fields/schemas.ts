import { Type, type Static } from '@sinclair/typebox';
import { IdOf, StringEnum, Text, Timestamp } from '../http/schema-types.js';
import { ListQuery, listEnvelope } from '../http/pagination.js';
import { CUSTOM_FIELD_ENTITIES } from '../custom-field-values.js';

export const CUSTOM_FIELD_TYPES = ['text', 'number', 'date', 'boolean', 'select'] as const;
export type CustomFieldType = (typeof CUSTOM_FIELD_TYPES)[number];

const Entity = StringEnum(CUSTOM_FIELD_ENTITIES, { description: 'What carries the field: work orders (`record`), assets, locations or work requests.' });
const FieldType = StringEnum(CUSTOM_FIELD_TYPES, { description: 'text, number, date (`YYYY-MM-DD`), boolean or select (one of `options`). Never changes.' });
const Options = Type.Array(Text(100), { minItems: 1, maxItems: 100, uniqueItems: true, description: 'A select field’s choices (required for select, refused for other types). Options may be added, never removed (409): stored values hold them.' });

export const CustomFieldSchema = Type.Object(
  {
    id: IdOf('cfd', 'Custom field identifier (`cfd_…`).'),
    key: Type.String({ description: 'The name values are keyed by in `customFields` and filtered by (`cf.<key>`); never changes.' }),
    label: Type.String({ description: 'What people see; may change freely.' }),
    entity: Entity,
    type: FieldType,
    options: Type.Optional(Type.Array(Type.String())),
    required: Type.Boolean({ description: 'Every write of the entity must leave it with a value.' }),
    archived: Type.Boolean({ description: 'Archived: values already set stay (and still filter); no new value is taken.' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    version: Type.Integer({ description: 'Increases with every change; the ETag is this number in quotes.' }),
  },
  { $id: 'CustomField', description: 'A field of your own on work orders, assets, locations or requests: its values are typed, checked on every write and filterable.' },
);
export type CustomField = Static<typeof CustomFieldSchema>;

export const CreateCustomFieldBody = Type.Object(
  {
    key: Type.String({ pattern: '^[a-z][a-z0-9_]{0,39}$', description: 'Lower-case letters, digits and `_`, starting with a letter, at most 40: unique per entity, never changes.' }),
    label: Text(200),
    entity: Entity,
    type: FieldType,
    options: Type.Optional(Options),
    required: Type.Optional(Type.Boolean({ description: 'false unless given.' })),
  },
  { $id: 'CreateCustomFieldRequest', additionalProperties: false, description: 'A new custom field.' },
);
export type CreateCustomFieldInput = Static<typeof CreateCustomFieldBody>;

export const UpdateCustomFieldBody = Type.Object(
  {
    label: Type.Optional(Text(200)),
    options: Type.Optional(Options),
    required: Type.Optional(Type.Boolean()),
    archived: Type.Optional(Type.Boolean()),
    key: Type.Optional(Type.String({ description: 'Never changes: only its current value is accepted.' })),
    type: Type.Optional(Type.String({ description: 'Never changes: another value is 409.' })),
    entity: Type.Optional(Type.String({ description: 'Never changes: only its current value is accepted.' })),
  },
  { $id: 'UpdateCustomFieldRequest', additionalProperties: false, minProperties: 1, description: 'What to change: the label, a select field’s options, whether it is required or archived.' },
);
export type UpdateCustomFieldInput = Static<typeof UpdateCustomFieldBody>;

export const CustomFieldListQuery = ListQuery({
  entity: Type.Optional(Entity),
  archived: Type.Optional(Type.Boolean({ description: 'true: only archived fields; false: only those in use.' })),
});
export type CustomFieldListQuery = Static<typeof CustomFieldListQuery>;

export const CustomFieldList = listEnvelope('customFields', Type.Ref('CustomField'), { $id: 'CustomFieldList', description: 'A page of custom fields, newest first.' });

export const customFieldComponents = [CustomFieldSchema, CreateCustomFieldBody, UpdateCustomFieldBody, CustomFieldList];
