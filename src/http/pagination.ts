import { Type, type TSchema } from '@sinclair/typebox';

export const MAX_OFFSET = 2_147_483_647;

/** `limit` and `offset` as the contract defines them; out-of-range values are rejected, never clamped. */
export const PaginationQuery = {
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50, description: 'Page size, 1 to 100.' }),
  offset: Type.Integer({ minimum: 0, maximum: MAX_OFFSET, default: 0, description: 'Items to skip.' }),
};

export interface Page {
  limit: number;
  offset: number;
}

/** The list envelope: the page under the collection key, plus total, limit and offset. */
export function listEnvelope<K extends string, T extends TSchema>(key: K, item: T) {
  return Type.Object(
    {
      [key]: Type.Array(item),
      total: Type.Integer({ minimum: 0, description: 'Items in the whole (filtered) collection.' }),
      limit: Type.Integer(),
      offset: Type.Integer(),
    } as { [P in K]: ReturnType<typeof Type.Array<T>> } & {
      total: ReturnType<typeof Type.Integer>;
      limit: ReturnType<typeof Type.Integer>;
      offset: ReturnType<typeof Type.Integer>;
    },
  );
}
