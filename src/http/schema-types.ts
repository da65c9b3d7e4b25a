import { Type, type SchemaOptions, type Static, type TOptional, type TProperties, type TSchema } from '@sinclair/typebox';
import { MAX_METADATA_BYTES, MAX_METADATA_KEYS } from '../metadata.js';

/** A required text field: at least one non-blank character, at most `max` characters. */
export function Text(max: number, description?: string) {
  return Type.String({ minLength: 1, maxLength: max, pattern: '\\S', ...(description ? { description } : {}) });
}

/**
 * `T` or null. Written as a type list (`type: ["string", "null"]`) rather than `anyOf` whenever the
 * inner schema has a single type: the response serializer (fast-json-stringify) resolves `anyOf`
 * by validating each branch at run time, which made serializing a page of 50 work orders cost more
 * than reading it from the database.
 */
export function Nullable<T extends TSchema>(schema: T) {
  const { type, enum: values } = schema as { type?: unknown; enum?: unknown[] };
  if (typeof type === 'string' && type !== 'null') {
    return Type.Unsafe<Static<T> | null>({ ...schema, type: [type, 'null'], ...(values ? { enum: [...values, null] } : {}) });
  }
  return Type.Union([schema, Type.Null()]);
}

/** A string from a fixed list, as a plain `enum` (cheap to validate and to serialize, unlike a union of literals). */
export function StringEnum<const V extends readonly string[]>(values: V, options: SchemaOptions = {}) {
  return Type.Unsafe<V[number]>({ ...options, type: 'string', enum: [...values] });
}

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds.' });

export function IdOf(prefix: string, description?: string) {
  return Type.String({ minLength: 1, maxLength: 64, pattern: '\\S', description: description ?? `Identifier (\`${prefix}_…\`).`, examples: [`${prefix}_01JD3Q4W8Y6V3C0M2ZP4K7N9XA`] });
}

/** Free-form key/value data kept for the client (ERP ids, tags). At most 50 keys, 16 KiB serialized. */
// `propertyNames` states the key limits: TypeBox turns a Record's key schema into a catch-all pattern.
/**
 * Any JSON object, every key kept. Use this, not `Type.Record(Type.String(), …)`: that becomes
 * `patternProperties: {"^(.*)$": …}`, and the response serializer then dropped keys containing a
 * line break (`.` does not match one).
 */
export function JsonObject(options: { description?: string } = {}) {
  return Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, ...options });
}

export const Metadata = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  additionalProperties: true,
  maxProperties: MAX_METADATA_KEYS,
  propertyNames: { minLength: 1, maxLength: 40 },
  description: `Free-form JSON object for the client’s own data: at most ${MAX_METADATA_KEYS} keys of up to 40 characters, ${MAX_METADATA_BYTES / 1024} KiB in all.`,
});



/**
 * A body's properties from a resource's list of fields: the `required` ones as they are, every other
 * one optional, in the list's order. One list gives the create body (`optionalExcept(fields, [...])`)
 * and the PATCH body (`optionalExcept(fields)`). Not `Type.Partial`: it emits the schema's keys in
 * another order than `Type.Object`, and the served OpenAPI document must not change by accident.
 */
export function optionalExcept<P extends TProperties, R extends keyof P = never>(fields: P, required: readonly R[] = []) {
  const entries = Object.entries(fields).map(([name, schema]) => [name, required.includes(name as R) ? schema : Type.Optional(schema)]);
  return Object.fromEntries(entries) as { [K in keyof P]: K extends R ? P[K] : TOptional<P[K]> };
}

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
