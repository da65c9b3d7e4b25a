import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { principalOf } from '../http/auth.js';
import { acceptedVersions, setEtag } from '../http/conditional.js';
import { answerCreated } from '../http/idempotent-answers.js';
import { IdParams } from '../http/schema-types.js';
import { CreatedHeaders, ETagHeader, problems, componentRef } from '../http/openapi.js';
import type { WebhookService } from './service.js';
import {
  CreateWebhookBody,
  DeliveryList,
  DeliveryListQuery,
  DeliveryParams,
  RotateSecretBody,
  UpdateWebhookBody,
  WebhookList,
  WebhookListQuery,
  type WebhookWithSecret,
} from './schemas.js';

const WebhookRef = Type.Ref('Webhook');
const WebhookWithSecretRef = Type.Ref('WebhookWithSecret');
const DeliveryRef = Type.Ref('WebhookDelivery');
const tags = ['Webhooks'];
const scope = 'webhooks:manage' as const;

export function webhookRoutes(webhooks: WebhookService): FastifyPluginAsyncTypebox {
  return async (app) => {
    // Route-level onSend runs after the idempotency layer stored the (sealed) response; see sealSecretForResponse.
    const revealSecret = async (_request: unknown, _reply: unknown, payload: unknown) =>
      typeof payload === 'string' ? webhooks.revealSealedSecret(payload) : payload;

    app.post(
      '/webhooks',
      {
        config: { scope, answersInTransaction: true },
        onSend: revealSecret,
        schema: {
          tags,
          operationId: 'createWebhook',
          summary: 'Subscribe to events',
          description:
            'Answers the subscription with its signing `secret`, shown this once. The URL must be absolute http(s) and resolve to public addresses; unknown event names are refused with 422.',
          body: componentRef(CreateWebhookBody),
          response: { 201: { ...WebhookWithSecretRef, headers: CreatedHeaders }, ...problems(400, 415, 422) },
        },
      },
      async (request, reply) => {
        // The answer stored for a replay holds the secret sealed; revealSecret opens it on the way out.
        const answer = answerCreated<WebhookWithSecret>(request, reply, '/api/v1/webhooks', (webhook) => webhooks.sealSecretForResponse(webhook));
        return answer.send(await webhooks.create(principalOf(request).orgId, request.body, answer.within));
      },
    );

    app.get(
      '/webhooks',
      {
        config: { scope },
        schema: { tags, operationId: 'listWebhooks', summary: 'List subscriptions, newest first (never their secrets)', description: 'Paged with `limit` and `offset`. Secrets are never answered again after create and rotate-secret.', querystring: WebhookListQuery, response: { 200: componentRef(WebhookList), ...problems(400) } },
      },
      async (request) => {
        const { limit, offset } = request.query;
        const { webhooks: page, total } = await webhooks.list(principalOf(request).orgId, { limit, offset });
        return { webhooks: page, total, limit, offset };
      },
    );

    app.get(
      '/webhooks/:id',
      {
        config: { scope },
        schema: { tags, operationId: 'getWebhook', summary: 'Get a subscription (never its secret)', description: 'The `ETag` answers the version, for `If-Match` on a later change.', params: IdParams, response: { 200: { ...WebhookRef, headers: ETagHeader }, ...problems(404) } },
      },
      async (request, reply) => {
        const webhook = await webhooks.get(principalOf(request).orgId, request.params.id);
        setEtag(reply, webhook.version);
        return webhook;
      },
    );

    app.patch(
      '/webhooks/:id',
      {
        config: { scope },
        schema: {
          tags,
          operationId: 'updateWebhook',
          summary: 'Change name, URL, events or active',
          description: 'Send `If-Match` with the ETag you read to avoid overwriting a concurrent change (412 otherwise).',
          params: IdParams,
          body: componentRef(UpdateWebhookBody),
          response: { 200: { ...WebhookRef, headers: ETagHeader }, ...problems(400, 404, 409, 412, 415, 422) },
        },
      },
      async (request, reply) => {
        const webhook = await webhooks.update(principalOf(request).orgId, request.params.id, request.body, acceptedVersions(request));
        setEtag(reply, webhook.version);
        return webhook;
      },
    );

    app.delete(
      '/webhooks/:id',
      {
        config: { scope },
        schema: {
          tags,
          operationId: 'deleteWebhook',
          summary: 'Delete a subscription',
          description: 'Its delivery log goes with it; deliveries not yet sent are dropped.',
          params: IdParams,
          response: { 204: Type.Null({ description: 'Deleted.' }), ...problems(404, 412) },
        },
      },
      async (request, reply) => {
        await webhooks.delete(principalOf(request).orgId, request.params.id, acceptedVersions(request));
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/webhooks/:id/rotate-secret',
      {
        // Not conditional: rotating or pinging does not depend on the version the client read.
        config: { scope, conditional: false },
        onSend: revealSecret,
        // The body is optional: no body means the default overlap.
        preValidation: async (request) => {
          request.body ??= {};
        },
        schema: {
          tags,
          operationId: 'rotateWebhookSecret',
          summary: 'Replace the signing secret',
          description:
            'Answers the new secret, shown this once. Deliveries are signed with it at once; during `overlapSeconds` (default 24 h) they also carry `X-Webhook-Signature-Previous`, made with the old secret, so receivers switch without losing deliveries. See docs/webhooks.md.',
          params: IdParams,
          body: componentRef(RotateSecretBody),
          response: { 200: { ...WebhookWithSecretRef, headers: ETagHeader }, ...problems(400, 404, 415) },
        },
      },
      async (request, reply) => {
        const webhook = await webhooks.rotateSecret(principalOf(request).orgId, request.params.id, request.body.overlapSeconds);
        setEtag(reply, webhook.version);
        return webhooks.sealSecretForResponse(webhook);
      },
    );

    app.post(
      '/webhooks/:id/ping',
      {
        // Not conditional: rotating or pinging does not depend on the version the client read.
        config: { scope, conditional: false },
        schema: {
          tags,
          operationId: 'pingWebhook',
          summary: 'Send a test delivery',
          description: 'Queues a signed `webhook.ping` delivery to this subscription through the normal pipeline (retries included); follow it in the delivery log.',
          params: IdParams,
          response: { 202: DeliveryRef, ...problems(404, 409) },
        },
      },
      async (request, reply) => reply.code(202).send(await webhooks.ping(principalOf(request).orgId, request.params.id)),
    );

    app.get(
      '/webhooks/:id/deliveries',
      {
        config: { scope },
        schema: {
          tags,
          operationId: 'listWebhookDeliveries',
          summary: 'The delivery log, newest first, with every attempt',
          description: 'Filter by `status` (`pending`, `delivering`, `succeeded`, `failed`). Paged with `limit` and `offset`.',
          params: IdParams,
          querystring: DeliveryListQuery,
          response: { 200: componentRef(DeliveryList), ...problems(400, 404) },
        },
      },
      async (request) => {
        const { limit, offset, status } = request.query;
        const { deliveries, total } = await webhooks.listDeliveries(principalOf(request).orgId, request.params.id, status, { limit, offset });
        return { deliveries, total, limit, offset };
      },
    );

    app.get(
      '/webhooks/:id/deliveries/:deliveryId',
      {
        config: { scope },
        schema: { tags, operationId: 'getWebhookDelivery', summary: 'One delivery with every attempt', description: 'The event, its state and every attempt with its answer status, error and duration.', params: DeliveryParams, response: { 200: DeliveryRef, ...problems(404) } },
      },
      async (request) => webhooks.getDelivery(principalOf(request).orgId, request.params.id, request.params.deliveryId),
    );

    app.post(
      '/webhooks/:id/deliveries/:deliveryId/redeliver',
      {
        config: { scope },
        schema: {
          tags,
          operationId: 'redeliverWebhookDelivery',
          summary: 'Send a finished delivery again',
          description: 'Queues a new delivery with the same X-Webhook-Id and body, signed with the current secret. 409 while the original is still being attempted.',
          params: DeliveryParams,
          response: { 202: DeliveryRef, ...problems(404, 409) },
        },
      },
      async (request, reply) => reply.code(202).send(await webhooks.redeliver(principalOf(request).orgId, request.params.id, request.params.deliveryId)),
    );
  };
}
