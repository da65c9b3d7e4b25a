import { defineFeature } from '../feature.js';
import { CATEGORY_EVENTS } from './events.js';
import { categoryRoutes } from './routes.js';
import { categoryComponents } from './schemas.js';
import { categoryExamples } from './examples.js';
import { CategoryService } from './service.js';

declare module '../feature.js' {
  interface FeatureServices {
    categories: CategoryService;
  }
}
declare module '../keys/scopes.js' {
  interface ScopeCatalogue extends Record<keyof typeof CATEGORY_SCOPES, string> {}
}

const CATEGORY_SCOPES = {
  'categories:read': 'Read work-order categories.',
  'categories:write': 'Create, rename and delete work-order categories.',
} as const;

export const categoriesFeature = defineFeature({
  name: 'categories',
  tags: [{ name: 'Categories', description: 'Kinds of work (plumbing, electrical…); every work order has one.' }],
  scopes: CATEGORY_SCOPES,
  events: CATEGORY_EVENTS,
  schemas: categoryComponents,
  examples: categoryExamples,
  build({ database, clock }) {
    const categories = new CategoryService(database.db, clock);
    return { services: { categories }, api: categoryRoutes(categories) };
  },
});
