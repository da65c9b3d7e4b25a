import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { metadataPatchMode } from '../http/merge-patch.js';
import { principalOf } from '../http/auth.js';
import { acceptedVersions, setEtag } from '../http/conditional.js';
import { answerCreated } from '../http/idempotent-answers.js';
import { IdParams } from '../http/schema-types.js';
import { CreatedHeaders, ETagHeader, problems, componentRef } from '../http/openapi.js';
import { RecordList, RecordListQuery } from '../records/schemas.js';
import type { AssetService } from './service.js';
import { AssetList, AssetListQuery, CreateAssetBody, UpdateAssetBody, type Asset } from './schemas.js';
import { CUSTOM_FIELD_FILTERS_DOC } from '../custom-field-values.js';

const AssetRef = Type.Ref('Asset');
const tags = ['Assets'];
const AssetRecordsQuery = Type.Omit(RecordListQuery, ['assetId']);

export function assetRoutes(assets: AssetService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/assets',
      {
        config: { scope: 'assets:write', answersInTransaction: true },
        schema: {
          tags,
          operationId: 'createAsset',
          summary: 'Create an asset',
          description: 'The tag must be unique within your organization (409 `already_exists`). Send `Idempotency-Key` to retry safely.',
          body: componentRef(CreateAssetBody),
          response: { 201: { ...AssetRef, headers: CreatedHeaders }, ...problems(400, 409, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const answer = answerCreated<Asset>(request, reply, '/api/v1/assets');
        return answer.send(await assets.create(principalOf(request).orgId, request.body, answer.within));
      },
    );

    app.get(
      '/assets',
      {
        config: { scope: 'assets:read' },
        schema: { tags, operationId: 'listAssets', summary: 'List assets, newest first', description: 'Filter by status and location; `q` searches names and tags. Paged with `limit` and `offset`.' + CUSTOM_FIELD_FILTERS_DOC, querystring: AssetListQuery, response: { 200: componentRef(AssetList), ...problems(400) } },
      },
      async (request) => {
        const { limit, offset, ...filter } = request.query;
        const { assets: page, total } = await assets.list(principalOf(request).orgId, filter, { limit, offset });
        return { assets: page, total, limit, offset };
      },
    );

    app.get(
      '/assets/:id',
      {
        config: { scope: 'assets:read' },
        schema: { tags, operationId: 'getAsset', summary: 'Get an asset', description: 'The `ETag` answers the version, for `If-Match` on a later change.', params: IdParams, response: { 200: { ...AssetRef, headers: ETagHeader }, ...problems(404) } },
      },
      async (request, reply) => {
        const asset = await assets.get(principalOf(request).orgId, request.params.id);
        setEtag(reply, asset.version);
        return asset;
      },
    );

    app.get(
      '/assets/:id/records',
      {
        // @NOTE: the answer is work orders, so it takes the work-order scope; a key without it learns nothing about them.
        config: { scope: 'records:read' },
        schema: {
          tags,
          operationId: 'listAssetRecords',
          summary: 'List the work orders raised against an asset, newest first',
          description: 'Same filters and envelope as GET /api/v1/records, restricted to this asset. Requires `records:read`.',
          params: IdParams,
          querystring: AssetRecordsQuery,
          response: { 200: componentRef(RecordList), ...problems(400, 404) },
        },
      },
      async (request) => {
        const { limit, offset, ...filter } = request.query;
        const { records, total } = await assets.workOrders(principalOf(request).orgId, request.params.id, filter, { limit, offset });
        return { records, total, limit, offset };
      },
    );

    app.patch(
      '/assets/:id',
      {
        config: { scope: 'assets:write' },
        schema: {
          tags,
          operationId: 'updateAsset',
          summary: 'Edit an asset',
          description: 'Emits `asset.updated` with each changed field’s previous and new value. Send `If-Match` with the ETag you read (412 when it moved on).',
          params: IdParams,
          body: componentRef(UpdateAssetBody),
          response: { 200: { ...AssetRef, headers: ETagHeader }, ...problems(400, 404, 409, 412, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const asset = await assets.update(principalOf(request).orgId, request.params.id, request.body, acceptedVersions(request), metadataPatchMode(request));
        setEtag(reply, asset.version);
        return asset;
      },
    );

    app.post(
      '/assets/:id/retire',
      {
        config: { scope: 'assets:write' },
        schema: {
          tags,
          operationId: 'retireAsset',
          summary: 'Retire an asset (status RETIRED)',
          description: 'The usual end of an asset’s life: it keeps its work-order history. Retiring a RETIRED asset changes nothing. Emits `asset.updated`.',
          params: IdParams,
          response: { 200: { ...AssetRef, headers: ETagHeader }, ...problems(404, 409, 412) },
        },
      },
      async (request, reply) => {
        const asset = await assets.retire(principalOf(request).orgId, request.params.id, acceptedVersions(request));
        setEtag(reply, asset.version);
        return asset;
      },
    );

    app.delete(
      '/assets/:id',
      {
        config: { scope: 'assets:write' },
        schema: {
          tags,
          operationId: 'deleteAsset',
          summary: 'Delete an asset no work order refers to',
          description: 'For mistakes. Refused with 409 `resource_in_use` while any work order refers to the asset (retire it instead), or while meters are on it. Emits `asset.deleted`.',
          params: IdParams,
          response: { 204: Type.Null({ description: 'Deleted.' }), ...problems(404, 409, 412) },
        },
      },
      async (request, reply) => {
        await assets.delete(principalOf(request).orgId, request.params.id, acceptedVersions(request));
        return reply.code(204).send(null);
      },
    );
  };
}
