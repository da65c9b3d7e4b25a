import type { FastifyInstance } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from '@sinclair/typebox';
import type { Registry } from 'prom-client';
import type { Database } from '../db/database.js';
import { databaseUnavailable } from '../db/errors.js';
import { schemaIsCurrent } from '../db/migrate.js';
import { AppError, errors } from '../errors.js';
import type { Lifecycle } from '../lifecycle.js';
import { componentRef } from './openapi.js';
import { examplesOf } from './openapi-examples.js';

const tags = ['Operations'];

const HealthSchema = Type.Object({ status: Type.Literal('ok') }, { $id: 'Health', description: 'The process is alive.' });
const WitnessHealthSchema = Type.Object({
  name: Type.String({ description: 'The witness’s name in WO_WITNESS_POLICY.' }),
  url: Type.String(),
  up: Type.Boolean({ description: 'Its last submission was cosigned.' }),
  cosignedSize: Type.Union([Type.Integer(), Type.Null()], { description: 'The size of the latest checkpoint it cosigned.' }),
  failures: Type.Integer({ description: 'Submissions that failed in a row.' }),
  lastSuccessAt: Type.Union([Type.String(), Type.Null()]),
  lastError: Type.Union([Type.String(), Type.Null()]),
});
const TimestampAuthorityHealthSchema = Type.Object(
  {
    url: Type.String({ description: 'WO_TSA_URL.' }),
    up: Type.Boolean({ description: 'Its last request gave a token that verifies.' }),
    timestampedSize: Type.Union([Type.Integer(), Type.Null()], { description: 'The size of the latest checkpoint it timestamped.' }),
    failures: Type.Integer({ description: 'Rounds of requests that failed in a row.' }),
    lastSuccessAt: Type.Union([Type.String(), Type.Null()]),
    lastError: Type.Union([Type.String(), Type.Null()]),
  },
  { description: 'With WO_TSA_URL: the TSA’s health. A TSA that is down never makes the process unready: checkpoints are still sealed and published, without a token.' },
);
const ReadinessSchema = Type.Object(
  {
    status: Type.Literal('ready'),
    database: Type.String({ description: 'The database dialect: `sqlite` or `postgres`.' }),
    witnesses: Type.Optional(
      Type.Array(WitnessHealthSchema, { description: 'With WO_WITNESS_POLICY: each witness’s health. A witness that is down never makes the process unready: completions are still sealed.' }),
    ),
    timestampAuthority: Type.Optional(TimestampAuthorityHealthSchema),
  },
  { $id: 'Readiness', description: 'The process can serve requests.' },
);
/** The health routes' named schemas: registered with each app that serves them. */
export const healthComponents = [HealthSchema, ReadinessSchema];
export const healthExamples = [
  examplesOf(HealthSchema, { alive: { summary: 'The process is alive', value: { status: 'ok' } } }),
  examplesOf(ReadinessSchema, { ready: { summary: 'Ready to serve, on PostgreSQL', value: { status: 'ready', database: 'postgres' } } }),
];

/** A client refused by a process on its way out should come back through the load balancer at once. */
const SHUTTING_DOWN_RETRY_AFTER_SECONDS = 1;
/** An unmigrated schema waits for an operator (or a starting process) to migrate it. */
const NOT_MIGRATED_RETRY_AFTER_SECONDS = 30;
const DATABASE_RETRY_AFTER_SECONDS = 5;
/**
 * A readiness probe answers within this, whatever the database does: a load balancer's check times out
 * after a few seconds, and a database that stopped answering must read as "not ready", not as a hang
 * (the query itself is given up later, see withQueryDeadline).
 */
const READINESS_DATABASE_TIMEOUT_MS = 2_000;

/** Liveness, readiness and metrics: served by `wo serve` on its port and by `wo worker` on WO_WORKER_PORT. */
export interface HealthDeps {
  readonly lifecycle: Lifecycle;
  readonly database: Database;
  /** What /metrics serves. */
  readonly metrics: Registry;
  /** With a witness policy: the witnesses' health, shown (never checked) by /readyz. */
  readonly witnessing?: { health(): Promise<Array<Static<typeof WitnessHealthSchema>>> } | undefined;
  /** With a TSA: its health, shown (never checked) by /readyz. */
  readonly timestamping?: { health(): Promise<Static<typeof TimestampAuthorityHealthSchema>> } | undefined;
}

export function healthRoutes(context: HealthDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    let schemaCheck: Promise<boolean> | undefined;
    app.get(
      '/healthz',
      {
        schema: {
          tags,
          operationId: 'getHealth',
          summary: 'Liveness: the process answers',
          description: 'For liveness probes: answers 200 as long as the process runs, whatever the database does.',
          response: { 200: componentRef(HealthSchema) },
        },
      },
      async () => ({ status: 'ok' as const }),
    );

    // Browsers ask every origin for an icon; the service has none, and "none" is not an error page.
    app.get('/favicon.ico', { schema: { hide: true } }, async (_request, reply) => reply.code(204).header('cache-control', 'public, max-age=86400').send());

    app.get(
      '/readyz',
      {
        schema: {
          tags,
          operationId: 'getReadiness',
          summary: 'Readiness: the database answers, its schema is migrated, and the process is not shutting down',
          description: 'For readiness probes and load balancers: 503 (with `Retry-After`) while the database is out of reach, its schema is not migrated, or the process drains.',
          response: { 200: componentRef(ReadinessSchema), 503: Type.Ref('Problem') },
        },
      },
      async () => {
        if (context.lifecycle.phase !== 'running') throw errors.unavailable('The process is shutting down.', SHUTTING_DOWN_RETRY_AFTER_SECONDS);
        let current: boolean;
        try {
          // Probes arriving while a check is out share it: a database that stopped answering holds one
          // connection for the check, not one per probe.
          schemaCheck ??= schemaIsCurrent(context.database).finally(() => {
            schemaCheck = undefined;
          });
          current = await withinReadinessTimeout(schemaCheck);
        } catch (error) {
          // Whatever the database answers instead of a row (or its silence), this process cannot serve: not ready.
          if (error instanceof AppError) throw error;
          throw databaseUnavailable(error) ?? errors.unavailable('The database does not answer as expected.', DATABASE_RETRY_AFTER_SECONDS);
        }
        if (!current) throw errors.unavailable('The database schema is not migrated to this version: run `wo migrate` (`npx wo migrate` in the service\'s directory).', NOT_MIGRATED_RETRY_AFTER_SECONDS);
        // Shown, not checked: a witness that is down delays proofs, it does not make this process unready.
        const witnesses = context.witnessing ? await withinReadinessTimeout(context.witnessing.health()).catch(() => undefined) : undefined;
        const timestampAuthority = context.timestamping ? await withinReadinessTimeout(context.timestamping.health()).catch(() => undefined) : undefined;
        return { status: 'ready' as const, database: context.database.dialect, ...(witnesses ? { witnesses } : {}), ...(timestampAuthority ? { timestampAuthority } : {}) };
      },
    );

    app.get('/metrics', { schema: { tags, summary: 'Prometheus metrics', hide: true } }, async (_request, reply) => {
      reply.type(context.metrics.contentType);
      return context.metrics.metrics();
    });
  };
}

/**
 * Requests during shutdown: while draining, every answer carries `Connection: close`, so keep-alive
 * clients reconnect (through the load balancer, to a process that stays); once the server closes,
 * what still arrives on an open connection is refused with a 503 problem (not Fastify's plain JSON).
 */
export function installShutdownGuard(app: FastifyInstance, lifecycle: Lifecycle): void {
  app.addHook('preClose', (done) => {
    lifecycle.beginClosing();
    done();
  });
  app.addHook('onRequest', (_request, reply, done) => {
    if (lifecycle.phase === 'running') return done();
    reply.header('connection', 'close');
    if (lifecycle.phase === 'closing') return done(errors.unavailable('The process is shutting down; retry.', SHUTTING_DOWN_RETRY_AFTER_SECONDS));
    done();
  });
}

/** The check's answer, or a 503 once READINESS_DATABASE_TIMEOUT_MS has passed without one. */
async function withinReadinessTimeout<T>(check: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(errors.unavailable(`The database did not answer within ${READINESS_DATABASE_TIMEOUT_MS / 1000} s.`, DATABASE_RETRY_AFTER_SECONDS)),
      READINESS_DATABASE_TIMEOUT_MS,
    );
  });
  // The check may still fail after the timeout has answered: nothing is waiting for it then.
  check.catch(() => undefined);
  try {
    return await Promise.race([check, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
