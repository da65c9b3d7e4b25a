import { ERROR_CODES, type ErrorCode, type FieldError } from '../errors.js';
import { EXAMPLE_IDS } from './openapi-examples.js';

/**
 * What each code of the error catalogue means for a client, in one place: the page of error codes the
 * service serves at /docs/errors (where every problem's `documentationUrl` points), docs/errors.md
 * (written from it by scripts/write-errors-doc.ts) and the problem examples of the OpenAPI document.
 * Text is Markdown's inline subset: `code` spans only, and `docs/<page>.md` for another page.
 */
export interface ErrorDoc {
  /** When the service answers it. */
  readonly when: string;
  /** What the client does about it. */
  readonly action: string;
  /** A realistic problem of this code: its `detail`, where it was answered, and its own members. */
  readonly example: { readonly detail: string; readonly instance: string; readonly errors?: FieldError[]; readonly [member: string]: unknown };
}

const record = `/api/v1/records/${EXAMPLE_IDS.record}`;

export const ERROR_DOCS: { readonly [C in ErrorCode]: ErrorDoc } = {
  validation_failed: {
    when: 'The request breaks the schema: missing, blank, too long or wrongly typed field, unknown field, bad `limit`/`offset`/`status`, NUL characters, unpaired UTF-16 surrogates, numbers that are not finite or integers beyond ±(2^53 − 1), a request URL that is not valid percent-encoding (path or query; percent-escapes must spell UTF-8) or has a path segment over 100 characters, `Authorization`, `Content-Type` or `Idempotency-Key` sent more than once (`header.<name>`: which copy counts would depend on who reads it), an unknown query parameter on any operation under `/api/v1` (the health checks, `/metrics` and `/.well-known/jwks.json` ignore query parameters, as probes and caches may add them).',
    action: 'Fix the request and send it again. `errors[]` lists each field (`body.address`, `querystring.limit`, `path`, `header.idempotency-key`) with what is wrong; an unknown field or parameter names the known one it most likely meant (`did you mean "status"?`).',
    example: {
      detail: 'The request is not valid; see errors for each problem.',
      instance: '/api/v1/records',
      errors: [
        { field: 'body.address', message: 'must not be blank' },
        { field: 'body.requester_name', message: 'is not a known field; did you mean "requesterName"?' },
      ],
    },
  },
  malformed_json: {
    when: 'The body is not valid JSON, is not UTF-8, names a member twice in one object (`{"priority":"LOW","priority":"URGENT"}`: I-JSON, RFC 7493; parsers disagree on which copy counts, so neither is taken), or uses a key refused against prototype poisoning (`__proto__`, `constructor.prototype`). An empty body is no body, whatever its `Content-Type`: operations whose fields are all optional accept it, others answer `validation_failed` naming each missing field.',
    action: 'Send the body as UTF-8 JSON, each member once; `detail` says what was refused.',
    example: { detail: 'The request body is not valid JSON.', instance: '/api/v1/records' },
  },
  malformed_request: {
    when: 'Node’s HTTP parser could not read the request (a bad request line, a control character in a header, both `Content-Length` and `Transfer-Encoding`, a broken chunk), or an HTTP/1.1 request has no `Host`. The connection is closed after the answer; when the broken request was pipelined behind one still being answered, the earlier one still gets its answer (with `Connection: close`) and the broken one none (a problem there would be read as the earlier request’s answer).',
    action: 'A client or proxy bug: check what the HTTP library or a proxy in between sends. Open a new connection to retry.',
    example: { detail: 'An HTTP/1.1 request must carry a Host header (RFC 9112, section 3.2).', instance: '/api/v1/records' },
  },
  invalid_idempotency_key: {
    when: '`Idempotency-Key` is empty, longer than 255 characters or not visible ASCII.',
    action: 'Send one UUID per logical operation (`Idempotency-Key: 0f8c2b1e-5d4a-4c3b-9e2f-7a6b5c4d3e2f`).',
    example: {
      detail: 'Idempotency-Key must be 1 to 255 visible ASCII characters; a UUID is recommended.',
      instance: '/api/v1/records',
      errors: [{ field: 'header.idempotency-key', message: 'must be 1 to 255 visible ASCII characters' }],
    },
  },
  unauthenticated: {
    when: 'No key, or a malformed, unknown, expired or revoked key. Every key that is sent and not accepted gets the same answer, so it reveals nothing about which keys exist. Carries `WWW-Authenticate: Bearer`.',
    action: 'Send `Authorization: Bearer wo_…` with a current key; an administrator creates one in the admin area or with `wo keys create`.',
    example: { detail: 'The API key is missing, malformed, unknown, expired or revoked.', instance: '/api/v1/records' },
  },
  insufficient_scope: {
    when: 'The key lacks the scope the operation needs; `requiredScope` names it (and `WWW-Authenticate` carries `error="insufficient_scope"`).',
    action: 'Use a key that holds `requiredScope`, or have an administrator create one that does. Scopes are fixed when a key is created.',
    example: { detail: 'This API key lacks the scope "records:write" required by this operation.', instance: '/api/v1/records', requiredScope: 'records:write' },
  },
  forbidden: {
    when: 'The action is not allowed for this caller. Raised only by the operators’ admin area (a form without its CSRF token), which answers it as an HTML page; the API itself refuses with `insufficient_scope` or `unauthenticated`.',
    action: 'Reload the admin page and submit the form again.',
    example: { detail: 'The form was missing its security token or it has expired. Reload the page and try again.', instance: '/admin/keys' },
  },
  not_found: {
    when: 'No such resource in your organization (another organization’s ids included).',
    action: 'Check the id, and that the key belongs to the organization that owns the resource.',
    example: { detail: `Work order "${EXAMPLE_IDS.record}" was not found`, instance: record },
  },
  route_not_found: {
    when: 'No route has this path (a trailing slash included: `/healthz/` is not `/healthz`).',
    action: 'Check the path against the API reference at `/docs`; every API path starts with `/api/v1`.',
    example: { detail: 'No route matches GET /api/v1/record.', instance: '/api/v1/record' },
  },
  method_not_allowed: {
    when: 'The path exists but not with this method; `Allow` lists the methods. `CONNECT` is answered so too (this is no proxy), and the connection closed.',
    action: 'Use one of the methods in `Allow`.',
    example: { detail: 'PUT is not supported on this path; use GET, PATCH.', instance: record },
  },
  request_timeout: {
    when: 'The request did not arrive completely in time: its headers or its body stopped arriving (no byte for `WO_BODY_IDLE_TIMEOUT_MS`, default 60 s), or its headers, still trickling in, were not complete within 60 s (answered within 5 s of that). The connection is closed.',
    action: 'Send the request again on a new connection, with the same `Idempotency-Key` for a write.',
    example: { detail: 'The request did not arrive in time; send it again.', instance: `${record}/attachments` },
  },
  conflict: {
    when: 'A concurrent change won: the resource changed while this request was changing it, or an occurrence was already decided.',
    action: 'Read the resource again and retry; nothing of this request was stored.',
    example: { detail: `Asset "${EXAMPLE_IDS.boiler}" changed while it was being deleted; fetch it again and retry.`, instance: `/api/v1/assets/${EXAMPLE_IDS.boiler}` },
  },
  invalid_transition: {
    when: 'The lifecycle action is not allowed from the work order’s current status; `allowedActions` lists those that are.',
    action: 'Read the work order and pick one of `allowedActions` (docs/api.md, Lifecycle). Not worth retrying as it is.',
    example: { detail: 'Cannot close a work order that is IN_PROGRESS. Allowed now: hold, complete, cancel.', instance: `${record}/close`, allowedActions: ['hold', 'complete', 'cancel'] },
  },
  resource_in_use: {
    when: 'The resource is still referenced (a category with work orders, a location with child locations or assets, an asset with work orders or meters).',
    action: '`detail` says what refers to it: move or finish those first, or retire an asset instead of deleting it.',
    example: {
      detail: `Category "${EXAMPLE_IDS.category}" still has work orders; move them to another category first.`,
      instance: `/api/v1/categories/${EXAMPLE_IDS.category}`,
    },
  },
  already_exists: {
    when: 'A name or tag that is unique in your organization is taken (a category name, an asset tag).',
    action: 'Use another name, or find the existing resource and use it.',
    example: { detail: 'A category named "Plumbing" already exists.', instance: '/api/v1/categories' },
  },
  insufficient_stock: {
    when: 'Issuing a part to a work order (`POST /records/{id}/parts`), or an `issue`, `transfer` or negative `adjust` movement (`POST /parts/{id}/movements`), would take the location’s on-hand below zero. Nothing is stored. `partId`, `locationId`, `onHand` and `requested` say what was short.',
    action: 'Issue from another location (`GET /parts/{id}/stock`), receive stock first, or issue less.',
    example: {
      detail: 'Only 1.5 of part "prt_…" are on hand at location "loc_…"; 2 were requested.',
      instance: `${record}/parts`,
      partId: EXAMPLE_IDS.part,
      locationId: EXAMPLE_IDS.building,
      onHand: '1.5',
      requested: '2',
    },
  },
  cost_line_posted: {
    when: 'The cost line was posted to an ERP (`POST /cost-lines/{id}/post`) and is frozen: it cannot be deleted or changed, and posting it again with another `erpDocumentId` is refused. `costLineId` and `erpDocumentId` (the document it was posted with) say which.',
    action: 'Correct a posted line with a reversing line (`POST /cost-lines/{id}/reverse`), which the ERP sees as a new, unposted line; then add the right one.',
    example: {
      detail: 'Cost line "pln_…" was posted as ERP document "INV-2027-0042" and is frozen; reverse it instead.',
      instance: `/api/v1/cost-lines/${EXAMPLE_IDS.partLine}/post`,
      costLineId: EXAMPLE_IDS.partLine,
      erpDocumentId: 'INV-2027-0042',
    },
  },
  request_decided: {
    when: 'The work request was already approved, rejected or cancelled: a request is decided once (two approvals at the same moment make one work order; the other answers this).',
    action: 'Read the request: `status` says what became of it and `recordId` names its work order. Not worth retrying.',
    example: { detail: 'Work request "wrq_01JV6Q1Z9C3YQ0A6N7P2R4T8WX" is already APPROVED.', instance: '/api/v1/requests/wrq_01JV6Q1Z9C3YQ0A6N7P2R4T8WX/approve' },
  },
  idempotency_key_in_use: {
    when: 'A request with this `Idempotency-Key` is still running; `Retry-After: 1`.',
    action: 'Wait `Retry-After` seconds and send the same request again: it then gets the first request’s answer.',
    example: { detail: 'A request with this Idempotency-Key is still being processed. Retry after it finishes.', instance: '/api/v1/records' },
  },
  precondition_failed: {
    when: '`If-Match` does not match the current `ETag`: the resource changed since it was read.',
    action: 'Read the resource again (`GET`, which answers the current `ETag`), decide again, and send the change with the new `ETag`.',
    example: { detail: 'The work order has changed since you read it (current ETag "4"). Fetch it again and retry.', instance: record },
  },
  payload_too_large: {
    when: 'The body is over 1 MiB; an attachment over `WO_ATTACHMENT_MAX_BYTES` (default 25 MiB), by its `Content-Length` or as counted while it streams (the connection is then closed).',
    action: 'Send less: split a batch of meter readings, or shrink the file.',
    example: { detail: 'The request body is larger than the 1 MiB limit.', instance: '/api/v1/records' },
  },
  unsupported_media_type: {
    when: 'The body is neither `application/json` nor `application/merge-patch+json`, or is compressed (`Content-Encoding` other than `identity`; the answer carries `Accept-Encoding: identity`). For an attachment: its `Content-Type` is not one of JPEG, PNG, WebP, HEIC/HEIF, PDF or UTF-8 plain text, or its bytes are not of the declared type (text: not valid UTF-8, or holding NUL bytes).',
    action: 'Send JSON bodies uncompressed with `Content-Type: application/json`; upload a file with its true media type.',
    example: { detail: 'Send request bodies as application/json.', instance: '/api/v1/records' },
  },
  range_not_satisfiable: {
    when: 'An attachment download’s `Range` starts past the end of the file; `Content-Range: bytes */<size>` gives the size.',
    action: 'Ask for a range within the size, or for the whole file without `Range`.',
    example: { detail: 'The file has 48213 bytes: the Range asks for none of them.', instance: `${record}/attachments/${EXAMPLE_IDS.attachment}/content` },
  },
  expectation_failed: {
    when: 'The request carries an `Expect` other than `100-continue`, the only expectation HTTP defines (RFC 9110, section 10.1.1). The connection is closed.',
    action: 'Leave out `Expect`, or send `Expect: 100-continue`.',
    example: { detail: 'Expect "200-ok" cannot be met: the only expectation this server knows is "100-continue".', instance: `${record}/attachments` },
  },
  proof_of_work_invalid: {
    when: 'A public intake form (`POST /intake/{token}`) came without its solved proof-of-work, with a wrong or expired one, or with one already used for another submission. Nothing was stored.',
    action: 'Load the form again (`GET /intake/{token}`) for a fresh challenge, solve it, and send the form once (docs/requests.md).',
    example: { detail: 'This form was already sent with this proof-of-work: load the form again to send another request.', instance: '/intake/itk_token' },
  },
  unprocessable_entity: {
    when: 'Well-formed, but refers to something that does not exist in your organization (a `categoryId`, `assetId` or `locationId`), or breaks a domain rule (a webhook URL the URL guard refuses, an unknown event name, a schedule rule that never occurs). `errors[]` names the fields.',
    action: 'Fix the fields `errors[]` names: create what they refer to first, or take its id from that answer.',
    example: {
      detail: 'The work order refers to something that does not exist in your organization.',
      instance: '/api/v1/records',
      errors: [{ field: 'body.categoryId', message: `no category "${EXAMPLE_IDS.category}" exists in your organization` }],
    },
  },
  idempotency_key_mismatch: {
    when: 'The `Idempotency-Key` was used with another method, path or body within 24 hours.',
    action: 'Use a new key for a new operation; resend a repeat with exactly the first request’s body.',
    example: { detail: 'This Idempotency-Key was already used with a different method, path or body. Use a new key for a new operation.', instance: '/api/v1/records' },
  },
  in_use: {
    when: 'A person, team or vendor is still named by open work orders (any status but `CLOSED` and `CANCELLED`) and cannot be deleted.',
    action: 'Reassign or finish those work orders first, or deactivate it (`PATCH … {"active": false}`) instead of deleting it: it stays on existing work orders and takes no new ones.',
    example: {
      detail: 'Vendor "vnd_01M8TGT6XK2D9W4Q0S7H3B5N8R" is named by 2 open work orders; reassign or finish them first, or deactivate it instead.',
      instance: '/api/v1/vendors/vnd_01M8TGT6XK2D9W4Q0S7H3B5N8R',
    },
  },
  checklist_incomplete: {
    when: 'A work order is completed (`POST /records/{id}/complete`, through the API, the SDK or an access link’s job page) while required items of its checklists are unanswered. `missing` lists each one as `{checklistId, key}`.',
    action: 'Answer the missing items (`PUT /records/{id}/checklists/{checklistId}/items/{key}`), then complete again.',
    example: {
      detail: 'Required checklist items are not answered: pressure, signature.',
      instance: `${record}/complete`,
      missing: [
        { checklistId: EXAMPLE_IDS.checklist, key: 'pressure' },
        { checklistId: EXAMPLE_IDS.checklist, key: 'signature' },
      ],
    },
  },
  custom_field_invalid: {
    when: 'A `customFields` value of a work order, asset or location does not fit its field: an unknown key, a value of another type, a select value not among the options, a date not written `YYYY-MM-DD`, a value for an archived field, or a required field left without one. `errors[]` names the field (`body.customFields.<key>`).',
    action: 'Send the value in its field’s type (GET /custom-fields lists the organization’s fields with their types and options).',
    example: {
      detail: 'Custom field "floor" takes a number.',
      instance: '/api/v1/records',
      errors: [{ field: 'body.customFields.floor', message: 'must be a number' }],
    },
  },
  currency_mismatch: {
    when: 'An amount (`{"amount", "currency"}`) is in another currency than the organization’s, which is set when it is created (`wo orgs create NAME --currency EUR`, default `USD`). `errors[]` names the field.',
    action: 'Send the amount in the organization’s currency; convert it on your side first.',
    example: {
      detail: 'Amounts must be in the organization’s currency, EUR.',
      instance: '/api/v1/people',
      errors: [{ field: 'body.hourlyRate.currency', message: 'must be EUR, the organization’s currency' }],
    },
  },
  meter_decreased: {
    when: 'A reading of a cumulative meter (`POST /meters/{id}/readings`) is lower than the reading just before it by `readAt`, or higher than the one just after it, and is not marked `reset: true`. `errors[]` names the item (`body.readings.3.value`); nothing of the batch is stored. A checklist’s `meter_reading` answer that would do so is refused the same way, naming `body.value.value`, and is not stored.',
    action: 'Correct the reading, or mark it `reset: true` when the counter really restarted (replaced, rolled over).',
    example: {
      detail: 'A cumulative meter’s readings must not go down without reset: true; nothing of the batch was stored.',
      instance: `/api/v1/meters/${EXAMPLE_IDS.runHours}/readings`,
      errors: [{ field: 'body.readings.1.value', message: 'is lower than the reading before it (1521.5 at 2026-03-09T09:00:00.000Z); send reset: true if the meter restarted its count' }],
    },
  },
  rate_limited: {
    when: 'The API key’s request budget (or, for requests without a valid key, the client address’s) is spent for now; `Retry-After` says in how many seconds to retry, and the `RateLimit` fields state the budget. See docs/rate-limits.md.',
    action: 'Wait `Retry-After` seconds, then retry; pace requests by the `RateLimit` field (requests left, seconds until the bucket is full).',
    example: { detail: 'This API key has used its 1000 requests for this 60-second period; retry after 3 s.', instance: '/api/v1/records' },
  },
  headers_too_large: {
    when: 'The request line and headers exceed 16 KiB (Node’s limit; a very long query string counts). The connection is closed.',
    action: 'Send fewer or shorter headers (cookies included), or a shorter query string.',
    example: { detail: 'The request line and headers together are larger than the 16 KiB this server reads.', instance: '/api/v1/records' },
  },
  internal_error: {
    when: 'Our fault. Nothing internal is disclosed; the log has the cause, under the answer’s `requestId`.',
    action: 'Retry, with the same `Idempotency-Key` for a write (nothing of a failed write is kept). Quote `requestId` when reporting it.',
    example: { detail: 'An unexpected error occurred. It has been logged; retrying may succeed.', instance: '/api/v1/records' },
  },
  unavailable: {
    when: 'Not the request’s fault, and temporary: the database cannot be reached or refuses new connections (an operator’s maintenance: connections disallowed, the service’s role or the database renamed or dropped and not yet back), a connection was ended under the request, every database connection of the process stayed busy for `WO_DATABASE_POOL_WAIT_MS`, a statement ran past `WO_DATABASE_STATEMENT_TIMEOUT_MS`, the database lacks a table of the service or denies its role one, SQLite stayed locked or cannot write its file (disk full, read-only, I/O error), or the process is shutting down (`/readyz` answers it from the shutdown signal on). Always with `Retry-After` (seconds).',
    action: 'Retry after `Retry-After` seconds, with the same `Idempotency-Key` for a write; another instance behind the load balancer may answer at once. A write answered 503 may still have been stored (its connection was lost after the commit was sent): retrying with the same key answers it as stored, never twice.',
    example: { detail: 'Every database connection of this process is busy. Retry later.', instance: '/api/v1/records' },
  },
};

/** The page of error codes the service serves, relative to its public URL (`#<code>` names a code’s section). */
export const ERRORS_PAGE_PATH = '/docs/errors';

/** The page of error codes as a client reaches it: on the service's public URL (`WO_PUBLIC_URL`). */
export function errorsPageUrl(publicUrl: string): string {
  return `${publicUrl}${ERRORS_PAGE_PATH}`;
}

/** Where a problem's `documentationUrl` points: the code's section of the page the service itself serves. */
export function errorDocumentationUrl(errorsPageUrl: string, code: ErrorCode): string {
  return `${errorsPageUrl}#${code}`;
}

/** The codes of the catalogue, in its order, with their status and title. */
export function documentedCodes(): { code: ErrorCode; status: number; title: string; doc: ErrorDoc }[] {
  return (Object.keys(ERROR_CODES) as ErrorCode[]).map((code) => ({ code, ...ERROR_CODES[code], doc: ERROR_DOCS[code] }));
}
