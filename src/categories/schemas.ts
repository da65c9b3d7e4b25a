import { Type, type Static } from '@sinclair/typebox';
import { IdOf, Nullable, optionalExcept, Text } from '../http/schema-types.js';
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

/** Each field a category's creator sets and PATCH changes. */
const fields = { name: Text(100), description: Nullable(Text(1000)) };

export const CreateCategoryBody = Type.Object(optionalExcept(fields, ['name']), {
  $id: 'CreateCategoryRequest',
  additionalProperties: false,
  description: 'A new category.',
});
export const UpdateCategoryBody = Type.Object(optionalExcept(fields), {
  $id: 'UpdateCategoryRequest',
  additionalProperties: false,
  minProperties: 1,
  description: 'Fields to change; null clears the description.',
});
export type CreateCategoryInput = Static<typeof CreateCategoryBody>;
export type UpdateCategoryInput = Static<typeof UpdateCategoryBody>;

export const CategoryListQuery = ListQuery({
  updatedAfter: Type.Optional(
    Type.String({ format: 'date-time', description: 'Only categories created or changed at or after this instant (incremental sync; deletions come as `category.deleted` events).' }),
  ),
});
export type CategoryListQuery = Static<typeof CategoryListQuery>;
export const CategoryList = listEnvelope('categories', Type.Ref('Category'), { $id: 'CategoryList', description: 'A page of categories, newest first.' });

/** This feature's named schemas: registered once with the app, emitted as OpenAPI components. */
export const categoryComponents = [CategorySchema, CreateCategoryBody, UpdateCategoryBody, CategoryList];
