import { examplesOf } from '../http/openapi-examples.js';
import { CreateWebhookBody, DeliveryList, DeliverySchema, RotateSecretBody, UpdateWebhookBody, WebhookList, WebhookSchema, WebhookWithSecretSchema } from './schemas.js';

export const webhookExamples = [
  examplesOf(CreateWebhookBody, {
    erpSync: {
      summary: 'Keep an ERP in step with work orders',
      description: '`url` is your receiver: it must be reachable from the service over the internet (public addresses only).',
      value: {
        name: 'ERP work-order sync',
        url: 'https://erp.example.com/hooks/work-orders',
        events: ['record.created', 'record.status_changed', 'record.completed', 'record.proof_delivered'],
      },
    },
  }),
  examplesOf(UpdateWebhookBody, {
    pause: { summary: 'Stop new deliveries for now', value: { active: false } },
  }),
  examplesOf(RotateSecretBody, {
    oneHourOverlap: { summary: 'Rotate, signing with both secrets for an hour', value: { overlapSeconds: 3600 } },
    leaked: { summary: 'The secret leaked: end it at once', value: { overlapSeconds: 0 } },
  }),
  // Answers.
  examplesOf(WebhookSchema, {
    erpSync: {
      summary: 'A subscription (never its secret)',
      value: {
        id: 'whk_01M8TGT64CD2VDYQ2Y2P4FQDKF',
        name: 'ERP work-order sync',
        url: 'https://erp.example.com/hooks/work-orders',
        events: ['record.created', 'record.status_changed', 'record.completed', 'record.proof_delivered'],
        active: true,
        previousSecretExpiresAt: null,
        createdAt: '2026-03-09T08:05:29.000Z',
        updatedAt: '2026-03-09T08:05:29.000Z',
        version: 1,
      },
    },
  }),
  examplesOf(WebhookWithSecretSchema, {
    created: {
      summary: 'A new subscription with its secret, shown this once',
      value: {
        id: 'whk_01M8TGT64CD2VDYQ2Y2P4FQDKF',
        name: 'ERP work-order sync',
        url: 'https://erp.example.com/hooks/work-orders',
        events: ['record.created', 'record.status_changed', 'record.completed', 'record.proof_delivered'],
        active: true,
        previousSecretExpiresAt: null,
        createdAt: '2026-03-09T08:05:29.000Z',
        updatedAt: '2026-03-09T08:05:29.000Z',
        version: 1,
        secret: 'whsec_yt9LtlhuTQgbpMP0ZgE/t0mmCa3ZLqXO6PUPr5TMjqk=',
      },
    },
  }),
  examplesOf(DeliverySchema, {
    succeeded: {
      summary: 'Delivered at the first attempt',
      value: {
        id: 'dlv_01M8TGT6QF5Y26483DC8W25KH7',
        webhookId: 'whk_01M8TGT64CD2VDYQ2Y2P4FQDKF',
        eventId: 'evt_01M8TGT6QENZK2E1HNB56VBH6B',
        event: 'record.proof_delivered',
        status: 'succeeded',
        attemptCount: 1,
        nextAttemptAt: null,
        lastStatusCode: 200,
        lastError: null,
        createdAt: '2026-03-12T10:02:37.441Z',
        updatedAt: '2026-03-12T10:02:37.441Z',
        completedAt: '2026-03-12T10:02:37.441Z',
        attempts: [{ attempt: 1, startedAt: '2026-03-12T10:02:37.441Z', durationMs: 1, statusCode: 200, error: null, responseExcerpt: null }],
      },
    },
    pingQueued: {
      summary: 'A ping, queued for its first attempt',
      value: {
        id: 'dlv_01M8TGT6SK4VE2QKWMXF4VE4MD',
        webhookId: 'whk_01M8TGT64CD2VDYQ2Y2P4FQDKF',
        eventId: 'evt_01M8TGT6SK4VE2QKWMXF4VE4MC',
        event: 'webhook.ping',
        status: 'pending',
        attemptCount: 0,
        nextAttemptAt: '2026-03-12T10:15:00.000Z',
        lastStatusCode: null,
        lastError: null,
        createdAt: '2026-03-12T10:15:00.000Z',
        updatedAt: '2026-03-12T10:15:00.000Z',
        completedAt: null,
        attempts: [],
      },
    },
  }),
  examplesOf(WebhookList, {
    firstPage: {
      summary: 'The first page of subscriptions, newest first',
      value: {
        webhooks: [
          {
            id: 'whk_01M8TGT64CD2VDYQ2Y2P4FQDKF',
            name: 'ERP work-order sync',
            url: 'https://erp.example.com/hooks/work-orders',
            events: ['record.created', 'record.status_changed', 'record.completed', 'record.proof_delivered'],
            active: true,
            previousSecretExpiresAt: null,
            createdAt: '2026-03-09T08:05:29.000Z',
            updatedAt: '2026-03-09T08:05:29.000Z',
            version: 1,
          },
        ],
        total: 1,
        limit: 50,
        offset: 0,
      },
    },
  }),
  examplesOf(DeliveryList, {
    newestFirst: {
      summary: 'The latest deliveries, newest first',
      value: {
        deliveries: [
          {
            id: 'dlv_01M8TGT6QF5Y26483DC8W25KH7',
            webhookId: 'whk_01M8TGT64CD2VDYQ2Y2P4FQDKF',
            eventId: 'evt_01M8TGT6QENZK2E1HNB56VBH6B',
            event: 'record.proof_delivered',
            status: 'succeeded',
            attemptCount: 1,
            nextAttemptAt: null,
            lastStatusCode: 200,
            lastError: null,
            createdAt: '2026-03-12T10:02:37.441Z',
            updatedAt: '2026-03-12T10:02:37.441Z',
            completedAt: '2026-03-12T10:02:37.441Z',
            attempts: [{ attempt: 1, startedAt: '2026-03-12T10:02:37.441Z', durationMs: 1, statusCode: 200, error: null, responseExcerpt: null }],
          },
          {
            id: 'dlv_01M8TGT6NTSBVRGEBT8Y3DJSTV',
            webhookId: 'whk_01M8TGT64CD2VDYQ2Y2P4FQDKF',
            eventId: 'evt_01M8TGT6NQSNDSVD2NANM6XP59',
            event: 'record.completed',
            status: 'succeeded',
            attemptCount: 1,
            nextAttemptAt: null,
            lastStatusCode: 200,
            lastError: null,
            createdAt: '2026-03-12T10:02:37.441Z',
            updatedAt: '2026-03-12T10:02:37.441Z',
            completedAt: '2026-03-12T10:02:37.441Z',
            attempts: [{ attempt: 1, startedAt: '2026-03-12T10:02:37.441Z', durationMs: 3, statusCode: 200, error: null, responseExcerpt: null }],
          },
        ],
        total: 15,
        limit: 2,
        offset: 0,
      },
    },
  }),
];
