import type { components, operations, webhooks } from './generated/openapi.js';
import type { OPERATIONS, PROBLEM_CODES } from './generated/operations.js';

/** The name of every operation of the API, as its operationId in the OpenAPI document. */
export type OperationId = keyof typeof OPERATIONS & keyof operations;

/** The named schemas of the API (`Schemas['Record']` is a work order). */
export type Schemas = components['schemas'];

type Operation<Id extends OperationId> = operations[Id];
type Parameters<Id extends OperationId> = Operation<Id>['parameters'];

/** `{ key: V }` when V is required, `{ key?: V }` when it may be left out, nothing when the operation has none. */
type Part<Key extends string, Value> = [Exclude<Value, undefined>] extends [never]
  ? unknown
  : undefined extends Value
    ? { [K in Key]?: Exclude<Value, undefined> }
    : { [K in Key]: Value };

/** Paging parameters have server-side defaults: the client never requires them. */
type QueryOf<Id extends OperationId> = Parameters<Id> extends { query?: infer Q }
  ? [Exclude<Q, undefined>] extends [never]
    ? undefined
    : Simplify<WithCustomFieldFilters<Id, Omit<Exclude<Q, undefined>, 'limit' | 'offset'> & Partial<Pick<Exclude<Q, undefined>, Extract<keyof Exclude<Q, undefined>, 'limit' | 'offset'>>>>>
  : undefined;

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** A bound of a number or date custom field: `cf.<key>[gte]=…` and so on, all of them applying. */
export interface CustomFieldRange {
  gt?: number | string;
  gte?: number | string;
  lt?: number | string;
  lte?: number | string;
}

/**
 * The `cf.` filters of a list, by the field's key (the organization's own, hence not in the document):
 * a value is exact (text, select, boolean, number, date `YYYY-MM-DD`), a range bounds a number or a
 * date. `{ unit: '4B', floor: { gte: 2, lt: 5 } }` sends `cf.unit=4B&cf.floor[gte]=2&cf.floor[lt]=5`.
 */
export type CustomFieldFilters = Record<string, string | number | boolean | CustomFieldRange>;

/** The lists that filter by custom fields. */
type CustomFieldListId = 'listRecords' | 'listAssets' | 'listLocations';

type WithCustomFieldFilters<Id, Q> = Id extends CustomFieldListId ? Q & { customFields?: CustomFieldFilters } : Q;
type QueryPart<Id extends OperationId> = [QueryOf<Id>] extends [undefined]
  ? unknown
  : RequiredKeys<NonNullable<QueryOf<Id>>> extends never
    ? { query?: QueryOf<Id> }
    : { query: QueryOf<Id> };

type RequiredKeys<T> = { [K in keyof T]-?: undefined extends T[K] ? never : K }[keyof T];

type RequestContent<Id extends OperationId> = Operation<Id> extends { requestBody?: infer B }
  ? [Exclude<B, undefined>] extends [never]
    ? never
    : Exclude<B, undefined> extends { content: infer C }
      ? C
      : never
  : never;

/** Bytes of a file to upload. */
export type BinaryBody = Blob | Uint8Array | ArrayBuffer | string;

type BodyPart<Id extends OperationId> = [RequestContent<Id>] extends [never]
  ? unknown
  : 'application/json' extends keyof RequestContent<Id>
    ? Part<'body', RequestContent<Id>['application/json' & keyof RequestContent<Id>] | (undefined extends Operation<Id>['requestBody'] ? undefined : never)>
    : { body: BinaryBody; contentType: keyof RequestContent<Id> & string };

/** What every call accepts besides the operation's own parameters. */
export interface CallOptions {
  /** `Idempotency-Key` of a POST; one is generated per call when left out, and reused by its retries. */
  idempotencyKey?: string;
  /** `If-Match`: the ETag the change is conditional on (412 `precondition_failed` when stale). */
  ifMatch?: string;
  /** Extra request headers (`X-Request-Id`, …). */
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** The argument of an operation's method: its path and query parameters, its body, and CallOptions. */
export type OperationInput<Id extends OperationId> = Part<'path', Parameters<Id>['path']> & QueryPart<Id> & BodyPart<Id> & CallOptions;

/** The method's arguments: optional when nothing in the input is required. */
export type OperationArgs<Id extends OperationId> =
  RequiredKeys<OperationInput<Id>> extends never ? [input?: OperationInput<Id>] : [input: OperationInput<Id>];

type SuccessStatus = 200 | 201 | 202 | 203 | 204 | 206;
type SuccessResponses<Id extends OperationId> = {
  [S in keyof Operation<Id>['responses']]: S extends SuccessStatus ? Operation<Id>['responses'][S] : never;
}[keyof Operation<Id>['responses']];

/** JSON is parsed; an operation that answers only text answers a string; anything else (a download) is bytes. */
type ContentValue<C> = keyof C extends `text/${string}`
  ? string
  : { [M in keyof C]: M extends `${string}json${string}` ? C[M] : Uint8Array }[keyof C];

/** What an operation's method resolves to: the body of its success answer (undefined for 204). */
export type OperationResult<Id extends OperationId> =
  SuccessResponses<Id> extends infer R ? (R extends { content: infer C } ? ContentValue<C> : R extends unknown ? undefined : never) : never;

/** The operations that page with `limit`/`offset` (or `after`, for the event feed). */
export type ListOperationId = {
  [Id in OperationId]: (typeof OPERATIONS)[Id]['paging'] extends 'offset' | 'after' ? Id : never;
}[OperationId];

/** The items of a list answer: the element type of its one array field. */
export type ListItem<Id extends OperationId> = {
  [K in keyof NonNullable<OperationResult<Id>>]: NonNullable<OperationResult<Id>>[K] extends ReadonlyArray<infer T> ? T : never;
}[keyof NonNullable<OperationResult<Id>>];

/** The closed set of problem codes (docs: errors). */
export type ProblemCode = (typeof PROBLEM_CODES)[number];

/** An event's name, as in the webhook catalogue and the event feed. */
export type WebhookEventName = keyof webhooks;

/** A delivery's body: `{event, payload, timestamp}`, discriminated by `event`. */
export type WebhookEnvelope = {
  [E in WebhookEventName]: webhooks[E]['post'] extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;
}[WebhookEventName];
