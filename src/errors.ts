// Domain errors: the closed set of codes the API answers with, and the error services throw.
// Services and repositories import this module, never src/http/; http/errors.ts renders these as
// RFC 9457 problem+json.

/**
 * The error codes the API answers with. Each code has one HTTP status and one
 * title; `type` is a stable URI derived from the code. docs/errors.md lists them for clients.
 */
export const ERROR_CODES = {
  validation_failed: { status: 400, title: 'Request validation failed' },
  malformed_json: { status: 400, title: 'Malformed JSON body' },
  malformed_request: { status: 400, title: 'Malformed HTTP request' },
  invalid_idempotency_key: { status: 400, title: 'Invalid Idempotency-Key' },
  unauthenticated: { status: 401, title: 'Authentication required' },
  insufficient_scope: { status: 403, title: 'Insufficient scope' },
  forbidden: { status: 403, title: 'Forbidden' },
  not_found: { status: 404, title: 'Not found' },
  route_not_found: { status: 404, title: 'Route not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  request_timeout: { status: 408, title: 'Request timeout' },
  conflict: { status: 409, title: 'Conflict' },
  invalid_transition: { status: 409, title: 'Transition not allowed' },
  resource_in_use: { status: 409, title: 'Resource in use' },
  in_use: { status: 409, title: 'Named by open work orders' },
  already_exists: { status: 409, title: 'Already exists' },
  insufficient_stock: { status: 409, title: 'Not enough stock on hand' },
  cost_line_posted: { status: 409, title: 'Cost line already posted' },
  checklist_incomplete: { status: 409, title: 'Required checklist items are not answered' },
  request_decided: { status: 409, title: 'Work request already decided' },
  idempotency_key_in_use: { status: 409, title: 'Idempotent request still in progress' },
  precondition_failed: { status: 412, title: 'Precondition failed' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  range_not_satisfiable: { status: 416, title: 'Range not satisfiable' },
  expectation_failed: { status: 417, title: 'Expectation failed' },
  proof_of_work_invalid: { status: 422, title: 'Proof-of-work missing, wrong, expired or used' },
  unprocessable_entity: { status: 422, title: 'Unprocessable entity' },
  idempotency_key_mismatch: { status: 422, title: 'Idempotency-Key reused with a different request' },
  meter_decreased: { status: 422, title: 'Cumulative meter reading decreased' },
  custom_field_invalid: { status: 422, title: 'Custom field value not valid' },
  currency_mismatch: { status: 422, title: 'Amount in another currency than the organization’s' },
  rate_limited: { status: 429, title: 'Too many requests' },
  headers_too_large: { status: 431, title: 'Request header fields too large' },
  internal_error: { status: 500, title: 'Internal server error' },
  unavailable: { status: 503, title: 'Service unavailable' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface FieldError {
  /** Where the problem is: `body.address`, `querystring.limit`, `path`, `header.idempotency-key`. */
  field: string;
  message: string;
}

export const PROBLEM_TYPE_BASE = 'urn:wo:problem:';

export class AppError extends Error {
  override name = 'AppError';
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly extra: { errors?: FieldError[]; headers?: Record<string, string>; [key: string]: unknown } = {},
  ) {
    super(detail);
    this.status = ERROR_CODES[code].status;
  }
}

/** Factory for the errors raised by domain services, so call sites read as sentences. */
export const errors = {
  notFound: (what: string) => new AppError('not_found', `${what} was not found`),
  validation: (errs: FieldError[], detail = 'The request is not valid; see errors for each problem.') =>
    new AppError('validation_failed', detail, { errors: errs }),
  unprocessable: (detail: string, errs?: FieldError[]) =>
    new AppError('unprocessable_entity', detail, errs ? { errors: errs } : {}),
  conflict: (detail: string) => new AppError('conflict', detail),
  meterDecreased: (detail: string, errs: FieldError[]) => new AppError('meter_decreased', detail, { errors: errs }),
  alreadyExists: (detail: string) => new AppError('already_exists', detail),
  insufficientStock: (detail: string, extra: { partId: string; locationId: string; onHand: string; requested: string }) => new AppError('insufficient_stock', detail, extra),
  costLinePosted: (detail: string, extra: { costLineId: string; erpDocumentId: string }) => new AppError('cost_line_posted', detail, extra),
  /** A completion while required checklist items are unanswered; `missing` lists them. */
  checklistIncomplete: (detail: string, missing: { checklistId: string; key: string }[]) => new AppError('checklist_incomplete', detail, { missing }),
  /** A custom-field value that is not of its field's type, an unknown or archived field, a required one missing. */
  customFieldInvalid: (detail: string, errs: FieldError[]) => new AppError('custom_field_invalid', detail, { errors: errs }),
  inUse: (detail: string) => new AppError('resource_in_use', detail),
  /** A person, team or vendor that open work orders name (DESIGN's `in_use`, apart from other references). */
  namedByOpenWorkOrders: (detail: string) => new AppError('in_use', detail),
  invalidTransition: (detail: string, allowedActions: string[]) =>
    new AppError('invalid_transition', detail, { allowedActions }),
  preconditionFailed: (detail: string) => new AppError('precondition_failed', detail),
  /** Not the request's fault and not for long (database out of reach, process shutting down): retry. */
  unavailable: (detail: string, retryAfterSeconds: number) =>
    new AppError('unavailable', detail, { headers: { 'retry-after': String(retryAfterSeconds) } }),
  unauthenticated: (detail: string) =>
    new AppError('unauthenticated', detail, { headers: { 'www-authenticate': 'Bearer realm="wo"' } }),
  insufficientScope: (scope: string) =>
    new AppError('insufficient_scope', `This API key lacks the scope "${scope}" required by this operation.`, {
      requiredScope: scope,
      headers: { 'www-authenticate': `Bearer realm="wo", error="insufficient_scope", scope="${scope}"` },
    }),
};

