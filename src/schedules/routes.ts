import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { metadataPatchMode } from '../http/merge-patch.js';
import { principalOf } from '../http/auth.js';
import { acceptedVersions, setEtag } from '../http/conditional.js';
import { answerCreated } from '../http/idempotent-answers.js';
import { IdParams } from '../http/schema-types.js';
import { CreatedHeaders, ETagHeader, problems, componentRef } from '../http/openapi.js';
import type { ScheduleService } from './service.js';
import {
  CreateScheduleBody,
  OccurrenceList,
  OccurrenceListQuery,
  OccurrenceParams,
  OccurrenceSchema,
  PreviewSchema,
  ScheduleList,
  ScheduleListQuery,
  UpdateScheduleBody,
  type Schedule,
} from './schemas.js';

const ScheduleRef = Type.Ref('Schedule');
const tags = ['Schedules'];

export function scheduleRoutes(schedules: ScheduleService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/schedules',
      {
        config: { scope: 'schedules:write', answersInTransaction: true },
        schema: {
          tags,
          operationId: 'createSchedule',
          summary: 'Create a preventive-maintenance schedule',
          description: 'The worker generates each occurrence’s work order `leadTime` before it is due, exactly once. A bad RRULE, time zone, duration or meter is a 422 naming the field. Send `Idempotency-Key` to retry safely.',
          body: componentRef(CreateScheduleBody),
          response: { 201: { ...ScheduleRef, headers: CreatedHeaders }, ...problems(400, 409, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const answer = answerCreated<Schedule>(request, reply, '/api/v1/schedules');
        return answer.send(await schedules.create(principalOf(request).orgId, request.body, answer.within));
      },
    );

    app.post(
      '/schedules/preview',
      {
        config: { scope: 'schedules:read' },
        schema: {
          tags,
          operationId: 'previewSchedule',
          summary: 'Preview a schedule’s next 10 occurrences (nothing is saved)',
          description: 'Takes the body a create takes and answers when its next time-based occurrences are due and when their work orders would be generated.',
          body: componentRef(CreateScheduleBody),
          response: { 200: componentRef(PreviewSchema), ...problems(400, 413, 415, 422) },
        },
      },
      async (request) => schedules.preview(principalOf(request).orgId, request.body),
    );

    app.get(
      '/schedules',
      {
        config: { scope: 'schedules:read' },
        schema: { tags, operationId: 'listSchedules', summary: 'List schedules, newest first', description: 'Filter by `status`; `updatedAfter` for incremental sync.', querystring: ScheduleListQuery, response: { 200: componentRef(ScheduleList), ...problems(400) } },
      },
      async (request) => {
        const { limit, offset, ...filter } = request.query;
        const { schedules: page, total } = await schedules.list(principalOf(request).orgId, filter, { limit, offset });
        return { schedules: page, total, limit, offset };
      },
    );

    app.get(
      '/schedules/:id',
      { config: { scope: 'schedules:read' }, schema: { tags, operationId: 'getSchedule', summary: 'Get a schedule', description: 'With its next due occurrence (`nextDueAt`).', params: IdParams, response: { 200: { ...ScheduleRef, headers: ETagHeader }, ...problems(404) } } },
      async (request, reply) => {
        const schedule = await schedules.get(principalOf(request).orgId, request.params.id);
        setEtag(reply, schedule.version);
        return schedule;
      },
    );

    app.patch(
      '/schedules/:id',
      {
        config: { scope: 'schedules:write' },
        schema: {
          tags,
          operationId: 'updateSchedule',
          summary: 'Change a schedule',
          description: 'Changing the triggers or the lead time plans the next occurrences anew. Send `If-Match` to change only the version you read.',
          params: IdParams,
          body: componentRef(UpdateScheduleBody),
          response: { 200: { ...ScheduleRef, headers: ETagHeader }, ...problems(400, 404, 409, 412, 413, 415, 422) },
        },
      },
      async (request, reply) => {
        const schedule = await schedules.update(principalOf(request).orgId, request.params.id, request.body, acceptedVersions(request), metadataPatchMode(request));
        setEtag(reply, schedule.version);
        return schedule;
      },
    );

    app.delete(
      '/schedules/:id',
      { config: { scope: 'schedules:write' }, schema: { tags, operationId: 'deleteSchedule', summary: 'Delete a schedule', description: 'Its occurrences go with it; the work orders it generated stay.', params: IdParams, response: { 204: Type.Null({ description: 'Deleted.' }), ...problems(404, 409, 412) } } },
      async (request, reply) => {
        await schedules.delete(principalOf(request).orgId, request.params.id, acceptedVersions(request));
        return reply.code(204).send(null);
      },
    );

    for (const [action, paused] of [['pause', true], ['resume', false]] as const) {
      app.post(
        `/schedules/:id/${action}`,
        {
          config: { scope: 'schedules:write' },
          schema: {
            tags,
            operationId: `${action}Schedule`,
            summary: paused ? 'Pause a schedule' : 'Resume a paused schedule',
            description: paused ? 'No work order is generated while it is paused.' : 'Occurrences that came up while it was paused follow its `catchUp`.',
            params: IdParams,
            response: { 200: { ...ScheduleRef, headers: ETagHeader }, ...problems(404, 412) },
          },
        },
        async (request, reply) => {
          const schedule = await schedules.setPaused(principalOf(request).orgId, request.params.id, paused, acceptedVersions(request));
          setEtag(reply, schedule.version);
          return schedule;
        },
      );
    }

    app.get(
      '/schedules/:id/occurrences',
      {
        config: { scope: 'schedules:read' },
        schema: {
          tags,
          operationId: 'listScheduleOccurrences',
          summary: 'A schedule’s occurrences in a window',
          description: 'Past ones as recorded (GENERATED, SKIPPED, MISSED), future ones forecast (PLANNED), oldest first; `from` and `to` bound the window (30 days back and 90 ahead by default).',
          params: IdParams,
          querystring: OccurrenceListQuery,
          response: { 200: componentRef(OccurrenceList), ...problems(400, 404) },
        },
      },
      async (request) => {
        const { limit, offset, from, to } = request.query;
        const { occurrences, total } = await schedules.occurrences(principalOf(request).orgId, request.params.id, { from, to }, { limit, offset });
        return { occurrences, total, limit, offset };
      },
    );

    app.post(
      '/schedules/:id/occurrences/:key/skip',
      {
        config: { scope: 'schedules:write' },
        schema: {
          tags,
          operationId: 'skipScheduleOccurrence',
          summary: 'Skip a planned occurrence',
          description: 'Records it SKIPPED, so no work order is generated for it; 409 once it is decided.',
          params: OccurrenceParams,
          response: { 200: componentRef(OccurrenceSchema), ...problems(404, 409) },
        },
      },
      async (request) => schedules.skip(principalOf(request).orgId, request.params.id, request.params.key),
    );
  };
}
