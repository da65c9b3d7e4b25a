import { Type, type Static } from '@sinclair/typebox';
import { IdOf, Nullable, Text } from '../http/schema-types.js';
import { ListQuery, listEnvelope } from '../http/pagination.js';

export const CategorySchema = Type.Object(
  {
    id: IdOf('cat'),
    name: Type.String(),
    description: Nullable(Type.String()),
    createdAt: Type.String(),
    updatedAt: Type.String(),
    version: Type.Integer(),
  },
  { $id: 'Category', description: 'A work-order category (plumbing, electrical, HVAC…). Names are unique within an organization.' },
);
export type Category = Static<typeof CategorySchema>;

export const CreateCategoryBody = Type.Object(
  { name: Text(100), description: Type.Optional(Nullable(Text(1000))) },
  { additionalProperties: false },
);
export const UpdateCategoryBody = Type.Object(
  { name: Type.Optional(Text(100)), description: Type.Optional(Nullable(Text(1000))) },
  { additionalProperties: false, minProperties: 1 },
);
export type CreateCategoryInput = Static<typeof CreateCategoryBody>;
export type UpdateCategoryInput = Static<typeof UpdateCategoryBody>;

export const CategoryListQuery = ListQuery({});
export const CategoryList = listEnvelope('categories', Type.Ref('Category'));
