import { Type, type Static } from '@sinclair/typebox';
import { IdOf, JsonObject, Metadata, Nullable, optionalExcept, Text, Timestamp } from '../http/schema-types.js';
import { ListQuery, listEnvelope } from '../http/pagination.js';
import { CUSTOM_FIELD_FILTERS, CustomFieldsInput, CustomFieldsSchema } from '../custom-field-values.js';

/** Each field a location's creator sets and PATCH changes, in the order both bodies list them. */
const fields = {
  name: Text(200, 'What people call the place: “Harbour Road site”, “Building B”, “Plant room 2”.'),
  address: Nullable(Text(500, 'Postal or descriptive address.')),
  parentId: Nullable(IdOf('loc', 'The enclosing location (`loc_…`): site → building → floor → room. Null for a top-level location.')),
  latitude: Nullable(Type.Number({ minimum: -90, maximum: 90, description: 'WGS 84 latitude in degrees; given together with longitude.' })),
  longitude: Nullable(Type.Number({ minimum: -180, maximum: 180, description: 'WGS 84 longitude in degrees; given together with latitude.' })),
  externalRef: Nullable(Text(200, 'The client’s own identifier for this location.')),
  metadata: Metadata,
  customFields: CustomFieldsInput,
};

export const LocationSchema = Type.Object(
  {
    id: IdOf('loc', 'Location identifier (`loc_…`).'),
    name: Type.String(),
    address: Nullable(Type.String()),
    parentId: Nullable(Type.String()),
    latitude: Nullable(Type.Number()),
    longitude: Nullable(Type.Number()),
    externalRef: Nullable(Type.String()),
    metadata: JsonObject(),
    customFields: CustomFieldsSchema,
    createdAt: Timestamp,
    updatedAt: Timestamp,
    version: Type.Integer({ description: 'Increases with every change; the ETag is this number in quotes.' }),
  },
  { $id: 'Location', description: 'A place where assets sit and work happens; locations nest (site → building → floor → room).' },
);
export type Location = Static<typeof LocationSchema>;

export const CreateLocationBody = Type.Object(optionalExcept(fields, ['name']), {
  $id: 'CreateLocationRequest',
  additionalProperties: false,
  description: 'A new location, top-level or under `parentId`.',
});
export type CreateLocationInput = Static<typeof CreateLocationBody>;

export const UpdateLocationBody = Type.Object(optionalExcept(fields), {
  $id: 'UpdateLocationRequest',
  additionalProperties: false,
  minProperties: 1,
  description: 'Fields to change; null clears an optional field. Moving a location under itself or one of its descendants is refused (422).',
});
export type UpdateLocationInput = Static<typeof UpdateLocationBody>;

/** The `parentId` filter value that selects top-level locations. */
export const TOP_LEVEL = 'none';

export const LocationListQuery = ListQuery(
  {
  parentId: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, description: 'Only the direct children of this location; `none` for top-level locations.' }),
  ),
  q: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive text contained in the name.' })),
  updatedAfter: Type.Optional(
    Type.String({ format: 'date-time', description: 'Only locations changed at or after this instant (incremental sync; deletions come as `location.deleted` events).' }),
  ),
  },
  CUSTOM_FIELD_FILTERS,
);
export type LocationListQuery = Static<typeof LocationListQuery>;

export const LocationList = listEnvelope('locations', Type.Ref('Location'), { $id: 'LocationList', description: 'A page of locations, newest first.' });

/** This feature's named schemas: registered once with the app, emitted as OpenAPI components. */
export const locationComponents = [LocationSchema, CreateLocationBody, UpdateLocationBody, LocationList];
