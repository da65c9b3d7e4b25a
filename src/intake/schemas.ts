import { Type, type Static } from '@sinclair/typebox';
import { IdOf, Nullable, optionalExcept, Text, Timestamp } from '../http/schema-types.js';
import { ListQuery, listEnvelope } from '../http/pagination.js';
import { Email, fields, Phone } from '../requests/schemas.js';

/** Photos one request through the public form may carry. */
export { MAX_REQUEST_ATTACHMENTS as MAX_INTAKE_PHOTOS } from '../requests/schemas.js';

/** Each field of an intake link its creator sets and PATCH changes. */
const linkFields = {
  name: Text(200, 'What it is for, as staff know it: “Block B, front door”.'),
  locationId: Nullable(IdOf('loc', 'The location every request through it gets (`loc_…`).')),
  assetId: Nullable(IdOf('ast', 'The asset every request through it gets (`ast_…`).')),
  categoryId: Nullable(IdOf('cat', 'The category every request through it gets (`cat_…`).')),
  enabled: Type.Boolean({ description: 'false: its form is the same 404 as an unknown link until enabled again.' }),
};

export const IntakeLinkSchema = Type.Object(
  {
    id: IdOf('itk', 'Intake-link identifier (`itk_…`); requests through it are filed by `intake:<id>`.'),
    name: Type.String(),
    locationId: Nullable(Type.String()),
    assetId: Nullable(Type.String()),
    categoryId: Nullable(Type.String()),
    enabled: Type.Boolean(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    version: Type.Integer({ description: 'Increases with every change (a rotation too); the ETag is this number in quotes.' }),
  },
  { $id: 'IntakeLink', description: 'A public form for people without an API key (tenants, staff, visitors), pinned to a location, an asset and a category; its token is never shown again after creation or rotation.' },
);
export type IntakeLink = Static<typeof IntakeLinkSchema>;

export const CreatedIntakeLinkSchema = Type.Composite(
  [
    IntakeLinkSchema,
    Type.Object({
      token: Type.String({ description: 'The link’s secret, shown this once (the service keeps only its SHA-256): rotate to get a new one.' }),
      url: Type.String({ description: 'The public form: `<WO_PUBLIC_URL>/intake/<token>`.' }),
      qrUrl: Type.String({ description: 'Its QR code as SVG, to print: `<url>/qr.svg`.' }),
    }),
  ],
  { $id: 'CreatedIntakeLink', description: 'An intake link with its token and URLs, as answered by its creation and each rotation.' },
);
export type CreatedIntakeLink = Static<typeof CreatedIntakeLinkSchema>;

export const CreateIntakeLinkBody = Type.Object(optionalExcept(linkFields, ['name']), { $id: 'CreateIntakeLinkRequest', additionalProperties: false, description: 'A new intake link.' });
export type CreateIntakeLinkInput = Static<typeof CreateIntakeLinkBody>;
export const UpdateIntakeLinkBody = Type.Object(optionalExcept(linkFields), { $id: 'UpdateIntakeLinkRequest', additionalProperties: false, minProperties: 1, description: 'Fields to change.' });
export type UpdateIntakeLinkInput = Static<typeof UpdateIntakeLinkBody>;

export const IntakeLinkListQuery = ListQuery({});
export const IntakeLinkList = listEnvelope('intakeLinks', Type.Ref('IntakeLink'), { $id: 'IntakeLinkList', description: 'A page of intake links, newest first.' });

/** The public form's fields as JSON (POST /intake/{token} with `application/json`). */
export const IntakeSubmission = Type.Object(
  {
    description: fields.description,
    requesterName: fields.requesterName,
    requesterEmail: Type.Optional(Email),
    requesterPhone: Type.Optional(Phone),
    address: Type.Optional(Text(500, 'Unit or room.')),
    altcha: Type.String({ minLength: 1, maxLength: 4000, description: 'The solved proof-of-work (ALTCHA payload, base64 JSON).' }),
    website: Type.Optional(Type.String({ maxLength: 200, description: 'The honeypot: left empty by people.' })),
  },
  { additionalProperties: false },
);
export type IntakeSubmission = Static<typeof IntakeSubmission>;

/** This feature's named schemas: registered once with the app, emitted as OpenAPI components. */
export const intakeComponents = [IntakeLinkSchema, CreatedIntakeLinkSchema, CreateIntakeLinkBody, UpdateIntakeLinkBody, IntakeLinkList];
