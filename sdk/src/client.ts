import createFetchClient from 'openapi-fetch';
import { OPERATIONS } from './generated/operations.js';
import type { CallOptions, CustomFieldFilters, ListItem, ListOperationId, OperationArgs, OperationId, OperationInput, OperationResult } from './operation-types.js';
import { errorFromResponse } from './problem-error.js';
import { createRetryingFetch } from './retrying-fetch.js';
import type { RetryOptions } from './retry-policy.js';
import { followEvents, type EventFeed } from './event-feed.js';
import { waitForProof, type ProofWaiter } from './proof-waiter.js';

export interface ClientOptions {
  /** Where the service answers, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** An API key (`wo_…`), sent as `Authorization: Bearer`. Public operations need none. */
  apiKey?: string;
  /** Retries of failed attempts (see RetryOptions for which requests are retried). */
  retry?: RetryOptions;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /** The fetch to use (default: the global one). */
  fetch?: (request: Request) => Promise<Response>;
}

/** An answer with its HTTP details, from `client.<operation>.withResponse(…)`. */
export interface ApiResponse<Id extends OperationId> {
  data: OperationResult<Id>;
  status: number;
  /** The resource's `ETag`: send it back as `ifMatch` to make a change conditional. */
  etag: string | undefined;
  /** True when the answer is the stored one of an earlier request with the same `Idempotency-Key`. */
  replayed: boolean;
  response: Response;
}

/** One method per operation, named by its operationId, resolving to the answer's body. */
export type OperationMethod<Id extends OperationId> = ((...args: OperationArgs<Id>) => Promise<OperationResult<Id>>) & {
  /** The same call, resolving to the body with the answer's status, ETag and replay flag. */
  withResponse(...args: OperationArgs<Id>): Promise<ApiResponse<Id>>;
} & (Id extends ListOperationId
    ? {
        /** Every item of the list, fetching page after page as the loop asks for more. */
        all(...args: OperationArgs<Id>): AsyncGenerator<ListItem<Id>, void, undefined>;
      }
    : unknown);

export type WorkOrderClient = { readonly [Id in Exclude<OperationId, DeprecatedOperationId>]: OperationMethod<Id> } & {
  /**
   * A work order's history in its first shape, under `events`.
   * @deprecated Use `listRecordHistory` (`GET /records/{id}/history`): the same history under `history`, each entry
   * `{action, from, to, actor: 'api_key:key_…', at, data}` as completion proofs state it. The service answers this
   * operation unchanged until its sunset, 2027-06-30 (see its `Deprecation` and `Sunset` headers).
   */
  readonly listRecordEvents: OperationMethod<'listRecordEvents'>;
} & {
  /** The event feed: `for await (const event of client.events.follow({ after }))`. */
  readonly events: EventFeed;
  /** Waits until a work order's proof is sealed and answers its bundle. */
  readonly waitForProof: ProofWaiter;
};

/** Operations the service announces as deprecated (`deprecated: true` in the document), typed above with their notice. */
type DeprecatedOperationId = 'listRecordEvents';

type LooseInput = CallOptions & { path?: Record<string, unknown>; query?: Record<string, unknown>; body?: unknown; contentType?: string };

/** A typed client of the work-order API. */
export function createClient(options: ClientOptions): WorkOrderClient {
  const http = createFetchClient({
    baseUrl: options.baseUrl,
    fetch: createRetryingFetch(options.fetch ?? ((request) => globalThis.fetch(request)), options.retry),
    headers: { ...options.headers, ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
  });

  async function call<Id extends OperationId>(id: Id, input: LooseInput = {}): Promise<ApiResponse<Id>> {
    const operation = OPERATIONS[id];
    const headers: Record<string, string> = { ...input.headers };
    if (operation.method === 'POST') headers['idempotency-key'] = input.idempotencyKey ?? globalThis.crypto.randomUUID();
    if (input.ifMatch !== undefined) headers['if-match'] = input.ifMatch;
    const binary = input.contentType !== undefined;
    if (binary) headers['content-type'] = input.contentType!;
    const { response, error } = await http.request(operation.method.toLowerCase() as 'get', operation.path as never, {
      params: { path: input.path, query: withCustomFieldParameters(input.query) },
      body: input.body,
      headers,
      parseAs: 'stream',
      ...(binary ? { bodySerializer: (body: unknown) => body } : {}),
      ...(input.signal ? { signal: input.signal } : {}),
    } as never);
    if (!response.ok) throw errorFromResponse(response, error);
    return {
      data: (await readBody(response, operation.responseMediaTypes)) as OperationResult<Id>,
      status: response.status,
      etag: response.headers.get('etag') ?? undefined,
      replayed: response.headers.get('x-idempotent-replay') === 'true',
      response,
    };
  }

  async function* all<Id extends OperationId>(id: Id, input: LooseInput = {}): AsyncGenerator<unknown, void, undefined> {
    const query: Record<string, unknown> = { limit: 100, ...input.query };
    const byOffset = OPERATIONS[id].paging === 'offset';
    if (byOffset) query.offset ??= 0;
    for (;;) {
      const { data } = await call(id, { ...input, query });
      const page = data as unknown as Record<string, unknown> & { total: number };
      const items = Object.values(page).find(Array.isArray) as unknown[];
      yield* items;
      if (items.length === 0) return;
      if (byOffset) {
        query.offset = (query.offset as number) + items.length;
        if ((query.offset as number) >= page.total) return;
      } else {
        // The feed's total counts what is left from `after` on: a page holding all of it is the last.
        if (items.length >= page.total) return;
        query.after = (items.at(-1) as { sequence: number }).sequence;
      }
    }
  }

  const client: Record<string, unknown> = {};
  for (const id of Object.keys(OPERATIONS) as OperationId[]) {
    const method = async (input?: LooseInput) => (await call(id, input)).data;
    method.withResponse = (input?: LooseInput) => call(id, input);
    if (OPERATIONS[id].paging) (method as unknown as { all: unknown }).all = (input?: LooseInput) => all(id, input);
    client[id] = method;
  }
  const typed = client as WorkOrderClient;
  client.events = { follow: (followOptions) => followEvents((input) => typed.listEvents(input as OperationInput<'listEvents'>), followOptions) } satisfies EventFeed;
  client.waitForProof = ((input) => waitForProof((proofInput) => typed.getRecordProof.withResponse(proofInput), input)) satisfies ProofWaiter;
  return typed;
}

/** JSON is parsed; the answer of an operation documented as text only is a string; anything else (a download) is bytes. */
async function readBody(response: Response, documented: readonly string[]): Promise<unknown> {
  if (response.status === 204 || response.body === null) return undefined;
  if (/json/.test(response.headers.get('content-type') ?? '')) {
    const text = await response.text();
    return text === '' ? undefined : JSON.parse(text);
  }
  if (documented.length > 0 && documented.every((mediaType) => mediaType.startsWith('text/'))) return response.text();
  return new Uint8Array(await response.arrayBuffer());
}

/** The query with its `customFields` filters written as the `cf.<key>` and `cf.<key>[op]` parameters the service reads. */
function withCustomFieldParameters(query: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  const filters = query?.customFields as CustomFieldFilters | undefined;
  if (!query || filters === undefined) return query;
  const { customFields: _written, ...rest } = query;
  for (const [key, condition] of Object.entries(filters)) {
    if (typeof condition !== 'object' || condition === null) rest[`cf.${key}`] = String(condition);
    else for (const [op, bound] of Object.entries(condition)) if (bound !== undefined) rest[`cf.${key}[${op}]`] = String(bound);
  }
  return rest;
}
