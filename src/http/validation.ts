import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

const common: Options = { allErrors: true, removeAdditional: false, useDefaults: true, strict: false };

/**
 * Two validators: query strings, path params and headers arrive as text and are coerced to the
 * declared types (`?limit=10`); JSON bodies are not, so `"categoryId": 5` is a type error, not "5".
 */
export function installValidation(app: FastifyInstance): void {
  const coercing = addFormats.default(new Ajv({ ...common, coerceTypes: 'array' }));
  const strict = addFormats.default(new Ajv({ ...common, coerceTypes: false }));
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strict : coercing).compile(schema));
}
