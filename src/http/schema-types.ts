import { Type, type TSchema } from '@sinclair/typebox';

/** A required text field: at least one non-blank character, at most `max` characters. */
export function Text(max: number, description?: string) {
  return Type.String({ minLength: 1, maxLength: max, pattern: '\\S', ...(description ? { description } : {}) });
}

export function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds.' });

export function IdOf(prefix: string, description?: string) {
  return Type.String({ minLength: 1, maxLength: 64, pattern: '\\S', description: description ?? `Identifier (\`${prefix}_…\`).`, examples: [`${prefix}_01JD3Q4W8Y6V3C0M2ZP4K7N9XA`] });
}

/** Free-form key/value data kept for the client (ERP ids, tags). At most 50 keys, 16 KiB serialized. */
// `propertyNames` states the key limits: TypeBox turns a Record's key schema into a catch-all pattern.
export const Metadata = Type.Record(Type.String(), Type.Unknown(), {
  maxProperties: 50,
  propertyNames: { minLength: 1, maxLength: 40 },
  description: 'Free-form JSON object for the client’s own data: at most 50 keys of up to 40 characters, 16 KiB in all.',
});

export const MAX_METADATA_BYTES = 16 * 1024;

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
