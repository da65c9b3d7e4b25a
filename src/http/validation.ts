import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errors, type AppError } from '../errors.js';

// `verbose`: each error keeps the schema that raised it, so an unknown field's can name the known ones.
const common: Options = { allErrors: true, removeAdditional: false, useDefaults: true, strict: false, verbose: true };

/**
 * Two validators: query strings, path params and headers arrive as text and are coerced to the
 * declared types (`?limit=10`); JSON bodies are not, so `"categoryId": 5` is a type error, not "5".
 */
export function installValidation(app: FastifyInstance): void {
  const coercing = addFormats.default(new Ajv({ ...common, coerceTypes: 'array' }));
  const strict = addFormats.default(new Ajv({ ...common, coerceTypes: false }));
  // Bodies refer to named schemas (componentRef): both validators learn every schema added to the
  // app, at the first compile, when all of them are known.
  let sharedSchemasAdded = false;
  app.setValidatorCompiler(({ schema, httpPart }) => {
    if (!sharedSchemasAdded) {
      for (const shared of Object.values(app.getSchemas())) {
        coercing.addSchema(shared as object);
        strict.addSchema(shared as object);
      }
      sharedSchemasAdded = true;
    }
    if (httpPart !== 'body') return coercing.compile(schema);
    const validate = strict.compile(schema);
    // A request without a body is validated as `{}`: actions whose fields are all optional accept it,
    // and others report each missing field rather than a bare "body must be object".
    return (data: unknown) => {
      const valid = validate(data === undefined || data === null ? {} : data);
      return valid ? { value: data } : { error: Object.assign(new Error('body validation failed'), { validation: validate.errors }) };
    };
  });
}

/** Deepest nesting a request may carry; deeper JSON is refused before anything recurses into it. */
export const MAX_JSON_DEPTH = 64;

/** What `inspectInput` finds wrong with a request part. */
export type InputProblem = 'nul' | 'lone_surrogate' | 'unsafe_number' | 'too_deep';

/**
 * Scans `value` without recursion for what no part of a request may carry, and answers the first
 * problem found (undefined when it is fine):
 * - 'nul': a string or key holding U+0000 (PostgreSQL text cannot store it);
 * - 'lone_surrogate': a string or key holding half of a UTF-16 surrogate pair (JSON's `\ud800`):
 *   it has no UTF-8 form, so the database would store replacement characters instead of what the
 *   answer echoed, and a completion statement could not be canonicalized (RFC 8785);
 * - 'unsafe_number': a number that is not finite (`1e400` parses as Infinity, stored as null) or an
 *   integer beyond ±(2^53 − 1), which JSON.parse has already rounded (I-JSON, RFC 7493);
 * - 'too_deep': nesting past MAX_JSON_DEPTH levels.
 */
export function inspectInput(value: unknown): InputProblem | undefined {
  // Two parallel stacks and index loops, not [item, depth] pairs and Object.entries: a 1,000-reading
  // batch is ~5,000 values, and the pairs were a measurable share of its garbage.
  const items: unknown[] = [value];
  const depths: number[] = [0];
  while (items.length > 0) {
    const item = items.pop();
    const depth = depths.pop()!;
    if (typeof item === 'string') {
      const problem = stringProblem(item);
      if (problem) return problem;
    } else if (typeof item === 'number') {
      if (!Number.isFinite(item) || (Number.isInteger(item) && !Number.isSafeInteger(item))) return 'unsafe_number';
    } else if (item !== null && typeof item === 'object') {
      if (depth >= MAX_JSON_DEPTH) return 'too_deep';
      if (Array.isArray(item)) {
        for (let i = 0; i < item.length; i++) {
          items.push(item[i]);
          depths.push(depth + 1);
        }
        continue;
      }
      const keys = Object.keys(item);
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]!;
        const problem = stringProblem(key);
        if (problem) return problem;
        items.push((item as Record<string, unknown>)[key]);
        depths.push(depth + 1);
      }
    }
  }
  return undefined;
}

/**
 * Where in `value` the first problem `inspectInput` finds lies, as path segments (`['readings', '3',
 * 'value']`); a key's problem names the object holding it. Walked only once a problem was found, so
 * requests that pass pay nothing for it; the same order as inspectInput's, so it finds the same one.
 */
export function locateInputProblem(value: unknown): string[] {
  const stack: [unknown, string[]][] = [[value, []]];
  while (stack.length > 0) {
    const [item, path] = stack.pop()!;
    if (typeof item === 'string' || typeof item === 'number') {
      if (inspectInput(item)) return path;
    } else if (item !== null && typeof item === 'object') {
      if (path.length >= MAX_JSON_DEPTH) return path;
      for (const [key, child] of Object.entries(item)) {
        if (stringProblem(key)) return path;
        stack.push([child, [...path, key]]);
      }
    }
  }
  return [];
}

function stringProblem(text: string): 'nul' | 'lone_surrogate' | undefined {
  if (text.includes('\u0000')) return 'nul';
  if (!text.isWellFormed()) return 'lone_surrogate';
  return undefined;
}

const PROBLEM_MESSAGES: Record<InputProblem, string> = {
  nul: 'must not contain NUL (U+0000) characters',
  lone_surrogate: 'must not contain unpaired UTF-16 surrogates (such as a lone \\ud800): they have no UTF-8 form',
  unsafe_number: 'numbers must be finite, and integers within ±9007199254740991 (I-JSON, RFC 7493)',
  too_deep: `must not nest deeper than ${MAX_JSON_DEPTH} levels`,
};

/**
 * @NOTE: what no database stores faithfully (NUL, lone surrogates, unsafe numbers) and absurdly deep
 * JSON are refused up front, in every part of the request, so both databases store exactly what the
 * answer echoes, a completion can always be signed, and nothing downstream overflows the stack.
 */
export function installInputGuard(app: FastifyInstance): void {
  // A callback hook: every request passes here, and a promise per request buys nothing.
  app.addHook('preValidation', (request, _reply, done) => {
    const refusal = inputRefusal('path', request.params) ?? inputRefusal('querystring', request.query) ?? inputRefusal('body', request.body);
    if (refusal) return done(refusal);
    if (refusesBody(request)) return done(errors.validation([{ field: 'body', message: 'must be absent: this operation takes no body' }], `${request.method} ${request.routeOptions.url} takes no body.`));
    done();
  });
}

/** The validation error for what `value` (a part of the request) holds that no database stores faithfully, if anything. */
function inputRefusal(part: 'path' | 'querystring' | 'body', value: unknown): AppError | undefined {
  const problem = inspectInput(value);
  if (!problem) return undefined;
  return errors.validation([{ field: [part, ...locateInputProblem(value)].join('.'), message: PROBLEM_MESSAGES[problem] }]);
}

/**
 * An API operation that declares no body (DELETE, retire, ping…) given one with content: refused, as
 * unknown fields are everywhere else, rather than ignored (a client sending `{"force":true}` to a
 * DELETE would otherwise believe it was heard). `{}` is no content: many clients send it on every POST.
 */
function refusesBody(request: FastifyRequest): boolean {
  const body = request.body;
  if (body === undefined || request.routeOptions.schema?.body !== undefined || !request.url.startsWith('/api/')) return false;
  return !(body !== null && typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0);
}

/**
 * Headers a request may carry once. Node keeps the first of repeated `Authorization` or
 * `Content-Type` and drops the rest, while a proxy in front may act on the last: the two would then
 * disagree about who is calling or what the body is. `Idempotency-Key` likewise names one request.
 */
const SINGLETON_HEADERS = new Set(['authorization', 'content-type', 'idempotency-key']);

/** The name of a header sent more than once that may appear once, if any (rawHeaders alternate name, value). */
export function repeatedSingletonHeader(rawHeaders: readonly string[]): string | undefined {
  let seen: Set<string> | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    if (!SINGLETON_HEADERS.has(name)) continue;
    seen ??= new Set();
    if (seen.has(name)) return name;
    seen.add(name);
  }
  return undefined;
}
