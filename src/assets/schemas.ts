// @NOTE: the event catalogue imports this module, so it must not import events/ (no import cycle).
import { Type, type Static } from '@sinclair/typebox';
import { IdOf, JsonObject, Metadata, Nullable, optionalExcept, StringEnum, Text, Timestamp } from '../http/schema-types.js';
import { ListQuery, listEnvelope } from '../http/pagination.js';
import { CUSTOM_FIELD_FILTERS, CustomFieldsInput, CustomFieldsSchema } from '../custom-field-values.js';

export const ASSET_STATUSES = ['ACTIVE', 'INACTIVE', 'RETIRED'] as const;
export type AssetStatus = (typeof ASSET_STATUSES)[number];
export const AssetStatusSchema = StringEnum(ASSET_STATUSES, {
  description: 'ACTIVE in service; INACTIVE out of service for now (spare, stored, broken); RETIRED permanently decommissioned.',
});

/** Each field an asset's creator sets and PATCH changes, in the order both bodies list them. */
const fields = {
  name: Text(200, 'What the asset is: “Rooftop AHU 2”, “Boiler B”.'),
  tag: Text(100, 'Asset tag or code, unique within your organization (compared exactly, case-sensitive).'),
  serialNumber: Nullable(Text(200)),
  manufacturer: Nullable(Text(200)),
  model: Nullable(Text(200)),
  status: AssetStatusSchema,
  locationId: Nullable(IdOf('loc', 'Where the asset is (`loc_…`).')),
  externalRef: Nullable(Text(200, 'The client’s own identifier for this asset.')),
  metadata: Metadata,
  customFields: CustomFieldsInput,
};

export const AssetSchema = Type.Object(
  {
    id: IdOf('ast', 'Asset identifier (`ast_…`).'),
    name: Type.String(),
    tag: Type.String(),
    serialNumber: Nullable(Type.String()),
    manufacturer: Nullable(Type.String()),
    model: Nullable(Type.String()),
    status: AssetStatusSchema,
    locationId: Nullable(Type.String()),
    externalRef: Nullable(Type.String()),
    metadata: JsonObject(),
    customFields: CustomFieldsSchema,
    retiredAt: Nullable(Type.String({ description: 'When the asset last became RETIRED; null unless RETIRED.' })),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    version: Type.Integer({ description: 'Increases with every change; the ETag is this number in quotes.' }),
  },
  { $id: 'Asset', description: 'A piece of equipment work orders are raised against.' },
);
export type Asset = Static<typeof AssetSchema>;

export const CreateAssetBody = Type.Object(
  {
    ...optionalExcept(fields, ['name', 'tag']),
    // Only a new asset gets a default: Ajv's useDefaults would fill one into every PATCH body.
    status: Type.Optional(StringEnum(ASSET_STATUSES, { default: 'ACTIVE', description: 'ACTIVE unless given.' })),
  },
  { $id: 'CreateAssetRequest', additionalProperties: false, description: 'A new asset.' },
);
export type CreateAssetInput = Static<typeof CreateAssetBody>;

export const UpdateAssetBody = Type.Object(optionalExcept(fields), {
  $id: 'UpdateAssetRequest',
  additionalProperties: false,
  minProperties: 1,
  description: 'Fields to change; null clears an optional field.',
});
export type UpdateAssetInput = Static<typeof UpdateAssetBody>;

export const AssetListQuery = ListQuery(
  {
  status: Type.Optional(AssetStatusSchema),
  locationId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only assets directly at this location.' })),
  q: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive text contained in the name or the tag.' })),
  updatedAfter: Type.Optional(
    Type.String({ format: 'date-time', description: 'Only assets changed at or after this instant (incremental sync; deletions come as `asset.deleted` events).' }),
  ),
  },
  CUSTOM_FIELD_FILTERS,
);
export type AssetListQuery = Static<typeof AssetListQuery>;

export const AssetList = listEnvelope('assets', Type.Ref('Asset'), { $id: 'AssetList', description: 'A page of assets, newest first.' });

/** This feature's named schemas: registered once with the app, emitted as OpenAPI components. */
export const assetComponents = [AssetSchema, CreateAssetBody, UpdateAssetBody, AssetList];
