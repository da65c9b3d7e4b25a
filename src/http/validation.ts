import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { errors } from './errors.js';

const common: Options = { allErrors: true, removeAdditional: false, useDefaults: true, strict: false };

/**
 * Two validators: query strings, path params and headers arrive as text and are coerced to the
 * declared types (`?limit=10`); JSON bodies are not, so `"categoryId": 5` is a type error, not "5".
 */
export function installValidation(app: FastifyInstance): void {
  const coercing = addFormats.default(new Ajv({ ...common, coerceTypes: 'array' }));
  const strict = addFormats.default(new Ajv({ ...common, coerceTypes: false }));
  app.setValidatorCompiler(({ schema, httpPart }) => {
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

/**
 * Scans `value` without recursion: 'nul' when a string or key holds U+0000 (PostgreSQL text cannot
 * store it), 'too_deep' past MAX_JSON_DEPTH levels, undefined when it is fine.
 */
export function inspectInput(value: unknown): 'nul' | 'too_deep' | undefined {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (typeof item === 'string') {
      if (item.includes('\u0000')) return 'nul';
    } else if (item !== null && typeof item === 'object') {
      if (depth >= MAX_JSON_DEPTH) return 'too_deep';
      for (const [key, child] of Object.entries(item)) {
        if (key.includes('\u0000')) return 'nul';
        stack.push([child, depth + 1]);
      }
    }
  }
  return undefined;
}

/**
 * @NOTE: NUL characters and absurdly deep JSON are refused up front, in every part of the request,
 * so both databases see the same input and nothing downstream can overflow the stack on it.
 */
export function installInputGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    for (const [part, value] of [['path', request.params], ['querystring', request.query], ['body', request.body]] as const) {
      const problem = inspectInput(value);
      if (problem === 'nul') throw errors.validation([{ field: part, message: 'must not contain NUL (U+0000) characters' }]);
      if (problem === 'too_deep') throw errors.validation([{ field: part, message: `must not nest deeper than ${MAX_JSON_DEPTH} levels` }]);
    }
  });
}
