import { Type, type Static } from '@sinclair/typebox';
import { IdOf, Nullable, optionalExcept, StringEnum, Text, Timestamp } from '../http/schema-types.js';
import { ListQuery, listEnvelope } from '../http/pagination.js';
import { MAX_WEBHOOK_URL_LENGTH } from './url-guard.js';

/** The event a ping sends; not in the catalogue, so nobody can subscribe to it. */
export const PING_EVENT = 'webhook.ping';

/** Longest time the previous secret keeps signing (X-Webhook-Signature-Previous) after a rotation. */
export const MAX_ROTATION_OVERLAP_SECONDS = 7 * 24 * 3600;
export const DEFAULT_ROTATION_OVERLAP_SECONDS = 24 * 3600;

const EventNames = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  minItems: 1,
  maxItems: 50,
  uniqueItems: true,
  description: 'Event names to receive (see the `webhooks` section). Unknown names are refused with 422.',
});
const Url = Type.String({
  minLength: 1,
  maxLength: MAX_WEBHOOK_URL_LENGTH,
  description: 'Absolute http(s) URL of the receiver. It must resolve to public addresses only (422 otherwise).',
});

export const WebhookSchema = Type.Object(
  {
    id: IdOf('whk'),
    name: Type.String(),
    url: Type.String(),
    events: Type.Array(Type.String()),
    active: Type.Boolean({ description: 'Inactive subscriptions get no new deliveries.' }),
    previousSecretExpiresAt: Nullable(Type.String({ description: 'Until then deliveries also carry X-Webhook-Signature-Previous, made with the secret before the last rotation.' })),
    createdAt: Type.String(),
    updatedAt: Type.String(),
    version: Type.Integer(),
  },
  { $id: 'Webhook', description: 'A webhook subscription. Its secret is shown only when created and when rotated.' },
);
export type Webhook = Static<typeof WebhookSchema>;

export const WebhookWithSecretSchema = Type.Object(
  {
    ...WebhookSchema.properties,
    secret: Type.String({ description: 'HMAC-SHA256 signing secret (`whsec_…`). Shown once: store it now.' }),
  },
  { $id: 'WebhookWithSecret', description: 'A subscription with its signing secret, answered only by create and rotate-secret.' },
);
export type WebhookWithSecret = Static<typeof WebhookWithSecretSchema>;

/** Each field a subscription's creator sets and PATCH changes, in the order both bodies list them. */
const fields = { name: Text(200), url: Url, events: EventNames, active: Type.Boolean() };

export const CreateWebhookBody = Type.Object(
  // Only a new subscription gets a default: Ajv's useDefaults would fill one into every PATCH body.
  { ...optionalExcept(fields, ['name', 'url', 'events']), active: Type.Optional(Type.Boolean({ default: true })) },
  { $id: 'CreateWebhookRequest', additionalProperties: false, description: 'A new subscription; its secret is answered once.' },
);
export const UpdateWebhookBody = Type.Object(optionalExcept(fields), {
  $id: 'UpdateWebhookRequest',
  additionalProperties: false,
  minProperties: 1,
  description: 'Fields to change.',
});
export const RotateSecretBody = Type.Object(
  {
    overlapSeconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_ROTATION_OVERLAP_SECONDS,
        default: DEFAULT_ROTATION_OVERLAP_SECONDS,
        description: 'How long deliveries keep a second signature made with the old secret. 0 ends the old secret at once (use it when the secret leaked).',
      }),
    ),
  },
  { $id: 'RotateWebhookSecretRequest', additionalProperties: false, description: 'How the old secret is retired; the body may be omitted.' },
);
export type CreateWebhookInput = Static<typeof CreateWebhookBody>;
export type UpdateWebhookInput = Static<typeof UpdateWebhookBody>;

export const WebhookListQuery = ListQuery({});
export const WebhookList = listEnvelope('webhooks', Type.Ref('Webhook'), { $id: 'WebhookList', description: 'A page of subscriptions, newest first (never their secrets).' });

export const DELIVERY_STATUSES = ['pending', 'delivering', 'succeeded', 'failed'] as const;

export const DeliveryAttemptSchema = Type.Object({
  attempt: Type.Integer({ minimum: 1 }),
  startedAt: Timestamp,
  durationMs: Type.Integer({ minimum: 0 }),
  statusCode: Nullable(Type.Integer({ description: 'HTTP status the receiver answered; null after a network error or time-out.' })),
  error: Nullable(Type.String()),
  responseExcerpt: Nullable(Type.String({ description: 'Start of the response body as UTF-8 text, at most 1,024 characters; bytes that are not UTF-8, NUL bytes and a character cut at the end read as U+FFFD.' })),
});

export const DeliverySchema = Type.Object(
  {
    id: IdOf('dlv'),
    webhookId: IdOf('whk'),
    eventId: Type.String({ description: 'The event id, sent as X-Webhook-Id.' }),
    event: Type.String(),
    status: StringEnum(DELIVERY_STATUSES),
    attemptCount: Type.Integer(),
    nextAttemptAt: Nullable(Type.String({ description: 'When the next attempt is due (pending deliveries).' })),
    lastStatusCode: Nullable(Type.Integer()),
    lastError: Nullable(Type.String()),
    createdAt: Type.String(),
    updatedAt: Type.String(),
    completedAt: Nullable(Type.String()),
    attempts: Type.Array(DeliveryAttemptSchema),
  },
  { $id: 'WebhookDelivery', description: 'One event sent to one subscription, with every attempt.' },
);
export type Delivery = Static<typeof DeliverySchema>;

export const DeliveryListQuery = ListQuery({
  status: Type.Optional(StringEnum(DELIVERY_STATUSES, { description: 'Only deliveries in this state.' })),
});
export const DeliveryList = listEnvelope('deliveries', Type.Ref('WebhookDelivery'), { $id: 'WebhookDeliveryList', description: 'A page of a subscription’s deliveries, newest first.' });

/** This feature's named schemas: registered once with the app, emitted as OpenAPI components. */
export const webhookComponents = [WebhookSchema, WebhookWithSecretSchema, DeliverySchema, CreateWebhookBody, UpdateWebhookBody, RotateSecretBody, WebhookList, DeliveryList];

export const DeliveryParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }), deliveryId: Type.String({ minLength: 1, maxLength: 64 }) });
