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

/** True when a string anywhere in `value` (keys included) holds U+0000, which PostgreSQL text cannot store. */
export function containsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some(containsNul);
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).some(([key, item]) => key.includes('\u0000') || containsNul(item));
  }
  return false;
}

/**
 * @NOTE: NUL characters are refused up front, in every part of the request, so that both databases
 * see the same input and none of them can turn it into a 500.
 */
export function installNulGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    for (const [part, value] of [['path', request.params], ['querystring', request.query], ['body', request.body]] as const) {
      if (containsNul(value)) throw errors.validation([{ field: part, message: 'must not contain NUL (U+0000) characters' }]);
    }
  });
}
