import type { Schemas, ProblemCode } from './operation-types.js';
import { PROBLEM_CODES } from './generated/operations.js';

/** An RFC 9457 problem document as the API answers it, `code` being one of the closed set. */
export type Problem<Code extends ProblemCode = ProblemCode> = {
  [K in Exclude<NamedKeys<Schemas['Problem']>, 'code'>]: Schemas['Problem'][K];
} & { code: Code; [extension: string]: unknown };

/** The declared fields of a schema that also admits extension members. */
type NamedKeys<T> = keyof { [K in keyof T as string extends K ? never : K]: T[K] };

/**
 * A 4xx or 5xx answer of the API. Program against `code` (the closed set of the document's codes,
 * so a misspelt code does not compile), never against `detail`:
 *
 *   catch (error) { if (error instanceof ProblemError && error.code === 'invalid_transition') … }
 */
export class ProblemError extends Error {
  override readonly name = 'ProblemError';
  readonly code: ProblemCode;
  readonly status: number;
  /** The service's id of the request (`X-Request-Id`): quote it when reporting a problem. */
  readonly requestId: string | undefined;

  /** The HTTP answer (headers, status); not enumerable, so that a logged error shows the problem, not the whole Response. */
  declare readonly response: Response;

  constructor(
    readonly problem: Problem,
    response: Response,
  ) {
    super(`${problem.status} ${problem.code}: ${problem.detail ?? problem.title}`);
    Object.defineProperty(this, 'response', { value: response, enumerable: false });
    this.code = problem.code;
    this.status = response.status;
    this.requestId = response.headers.get('x-request-id') ?? problem.requestId;
  }
}

/** An answer that is not the API's: a non-problem error status (a proxy's 502 page, say). */
export class UnexpectedResponseError extends Error {
  override readonly name = 'UnexpectedResponseError';
  /** The HTTP answer; not enumerable, as on ProblemError. */
  declare readonly response: Response;

  constructor(
    response: Response,
    readonly body: string,
  ) {
    super(`unexpected ${response.status} answer${response.url ? ` from ${response.url}` : ''}: ${body.slice(0, 200)}`);
    Object.defineProperty(this, 'response', { value: response, enumerable: false });
  }
}

/** True when `error` is a ProblemError with one of `codes` (any code when none are given); narrows the type. */
export function isProblem<Code extends ProblemCode>(error: unknown, ...codes: Code[]): error is ProblemError & { code: Code; problem: Problem<Code> } {
  return error instanceof ProblemError && (codes.length === 0 || codes.includes(error.code as Code));
}

export function isProblemCode(value: unknown): value is ProblemCode {
  return typeof value === 'string' && (PROBLEM_CODES as readonly string[]).includes(value);
}

/** The error for an error answer (its body parsed as JSON when it could be): a ProblemError when it is a problem document. */
export function errorFromResponse(response: Response, body: unknown): ProblemError | UnexpectedResponseError {
  if (typeof body === 'object' && body !== null && typeof (body as Problem).code === 'string') return new ProblemError(body as Problem, response);
  return new UnexpectedResponseError(response, typeof body === 'string' ? body : JSON.stringify(body ?? ''));
}
