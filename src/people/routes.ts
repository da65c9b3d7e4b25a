import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type TSchema } from '@sinclair/typebox';
import { principalOf } from '../http/auth.js';
import { acceptedVersions, setEtag } from '../http/conditional.js';
import { answerCreated } from '../http/idempotent-answers.js';
import { IdParams } from '../http/schema-types.js';
import { CreatedHeaders, ETagHeader, problems, componentRef } from '../http/openapi.js';
import type { InTransaction } from '../idempotency/in-transaction.js';
import type { Page } from '../db/page.js';
import type { DirectoryService } from './service.js';
import {
  PersonBodies,
  PersonList,
  PersonListQuery,
  TeamBodies,
  TeamList,
  TeamListQuery,
  VendorBodies,
  VendorList,
  VendorListQuery,
  type DirectoryFilter,
} from './schemas.js';

const tags = ['People, teams and vendors'];

interface Resource<T extends { id: string; version: number }> {
  /** Path segment and list key: `people`. */
  collection: string;
  /** In operation ids: `Person` gives createPerson, listPeople… */
  singular: string;
  plural: string;
  noun: string;
  component: string;
  bodies: { create: TSchema; update: TSchema };
  list: TSchema;
  query: TSchema;
  deleteNote: string;
  createNote: string;
  create(orgId: string, body: never, within?: InTransaction<T>): Promise<T>;
  get(orgId: string, id: string): Promise<T>;
  listPage(orgId: string, filter: DirectoryFilter, page: Page): Promise<{ items: T[]; total: number }>;
  update(orgId: string, id: string, body: never, versions?: number[]): Promise<T>;
  remove(orgId: string, id: string, versions?: number[]): Promise<void>;
}

/** The five routes of one kind of the directory: create, list, get, edit, delete. */
function registerResource<T extends { id: string; version: number }>(app: Parameters<FastifyPluginAsyncTypebox>[0], r: Resource<T>): void {
  const ref = Type.Ref(r.component);
  const base = `/${r.collection}`;
  app.post(
    base,
    {
      config: { scope: 'people:write', answersInTransaction: true },
      schema: {
        tags,
        operationId: `create${r.singular}`,
        summary: `Create a ${r.noun}`,
        description: `${r.createNote} Emits \`${r.noun}.created\`. Send \`Idempotency-Key\` to retry safely.`,
        body: componentRef(r.bodies.create),
        response: { 201: { ...ref, headers: CreatedHeaders }, ...problems(400, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      const answer = answerCreated<T>(request, reply, `/api/v1${base}`);
      return answer.send(await r.create(principalOf(request).orgId, request.body as never, answer.within));
    },
  );
  app.get(
    base,
    {
      config: { scope: 'people:read' },
      schema: {
        tags,
        operationId: `list${r.plural}`,
        summary: `List ${r.collection}, newest first`,
        description: 'Filter by `q` (text), `active`, `trade` and `updatedAfter`. Paged with `limit` and `offset`.',
        querystring: r.query,
        response: { 200: componentRef(r.list), ...problems(400) },
      },
    },
    async (request) => {
      const { limit, offset, ...filter } = request.query as DirectoryFilter & Page;
      const { items, total } = await r.listPage(principalOf(request).orgId, filter, { limit, offset });
      return { [r.collection]: items, total, limit, offset };
    },
  );
  app.get(
    `${base}/:id`,
    {
      config: { scope: 'people:read' },
      schema: { tags, operationId: `get${r.singular}`, summary: `Get a ${r.noun}`, description: 'The `ETag` answers the version, for `If-Match` on a later change.', params: IdParams, response: { 200: { ...ref, headers: ETagHeader }, ...problems(404) } },
    },
    async (request, reply) => {
      const item = await r.get(principalOf(request).orgId, request.params.id);
      setEtag(reply, item.version);
      return item;
    },
  );
  app.patch(
    `${base}/:id`,
    {
      config: { scope: 'people:write' },
      schema: {
        tags,
        operationId: `update${r.singular}`,
        summary: `Edit a ${r.noun}`,
        description: `\`"active": false\` deactivates: it stays on the work orders that name it, and new assignments of it are refused (422). Emits \`${r.noun}.updated\`. Send \`If-Match\` with the ETag you read (412 when it moved on).`,
        params: IdParams,
        body: componentRef(r.bodies.update),
        response: { 200: { ...ref, headers: ETagHeader }, ...problems(400, 404, 409, 412, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      const item = await r.update(principalOf(request).orgId, request.params.id, request.body as never, acceptedVersions(request));
      setEtag(reply, item.version);
      return item;
    },
  );
  app.delete(
    `${base}/:id`,
    {
      config: { scope: 'people:write' },
      schema: {
        tags,
        operationId: `delete${r.singular}`,
        summary: `Delete a ${r.noun}`,
        description: `Refused with 409 \`in_use\` while a work order that is not CLOSED or CANCELLED names it among its assignees (deactivate it instead, or reassign those first). ${r.deleteNote} Emits \`${r.noun}.deleted\`.`,
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...problems(404, 409, 412) },
      },
    },
    async (request, reply) => {
      await r.remove(principalOf(request).orgId, request.params.id, acceptedVersions(request));
      return reply.code(204).send(null);
    },
  );
}

export function directoryRoutes(directory: DirectoryService): FastifyPluginAsyncTypebox {
  return async (app) => {
    registerResource(app, {
      collection: 'people',
      singular: 'Person',
      plural: 'People',
      noun: 'person',
      component: 'Person',
      bodies: PersonBodies,
      list: PersonList,
      query: PersonListQuery,
      createNote: '`hourlyRate` is Money in the organization’s currency (422 `currency_mismatch` otherwise).',
      deleteNote: 'They leave every team they were in.',
      create: (orgId, body, within) => directory.createPerson(orgId, body, within),
      get: (orgId, id) => directory.getPerson(orgId, id),
      listPage: async (orgId, filter, page) => {
        const { people, total } = await directory.listPeople(orgId, filter, page);
        return { items: people, total };
      },
      update: (orgId, id, body, versions) => directory.updatePerson(orgId, id, body, versions),
      remove: (orgId, id, versions) => directory.deletePerson(orgId, id, versions),
    });
    registerResource(app, {
      collection: 'teams',
      singular: 'Team',
      plural: 'Teams',
      noun: 'team',
      component: 'Team',
      bodies: TeamBodies,
      list: TeamList,
      query: TeamListQuery,
      createNote: '`memberIds` must name people of your organization (422 otherwise).',
      deleteNote: 'Its members stay.',
      create: (orgId, body, within) => directory.createTeam(orgId, body, within),
      get: (orgId, id) => directory.getTeam(orgId, id),
      listPage: async (orgId, filter, page) => {
        const { teams, total } = await directory.listTeams(orgId, filter, page);
        return { items: teams, total };
      },
      update: (orgId, id, body, versions) => directory.updateTeam(orgId, id, body, versions),
      remove: (orgId, id, versions) => directory.deleteTeam(orgId, id, versions),
    });
    registerResource(app, {
      collection: 'vendors',
      singular: 'Vendor',
      plural: 'Vendors',
      noun: 'vendor',
      component: 'Vendor',
      bodies: VendorBodies,
      list: VendorList,
      query: VendorListQuery,
      createNote: 'A vendor can be assigned to work orders and sent an access link to their job page.',
      deleteNote: 'Its access links stop working.',
      create: (orgId, body, within) => directory.createVendor(orgId, body, within),
      get: (orgId, id) => directory.getVendor(orgId, id),
      listPage: async (orgId, filter, page) => {
        const { vendors, total } = await directory.listVendors(orgId, filter, page);
        return { items: vendors, total };
      },
      update: (orgId, id, body, versions) => directory.updateVendor(orgId, id, body, versions),
      remove: (orgId, id, versions) => directory.deleteVendor(orgId, id, versions),
    });
  };
}
