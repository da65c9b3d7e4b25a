import { examplesOf } from '../http/openapi-examples.js';
import { CategoryList, CategorySchema, CreateCategoryBody, UpdateCategoryBody } from './schemas.js';

export const categoryExamples = [
  examplesOf(CreateCategoryBody, {
    plumbing: { summary: 'Plumbing', value: { name: 'Plumbing', description: 'Leaks, blocked drains, taps, toilets and water heaters.' } },
  }),
  examplesOf(UpdateCategoryBody, {
    describe: { summary: 'Say what the category covers', value: { description: 'Leaks, blocked drains, taps, toilets, water heaters and boilers.' } },
  }),
  // Answers.
  examplesOf(CategorySchema, {
    plumbing: {
      summary: 'A category',
      value: {
        id: 'cat_01M8TGT63TVYZFDPFYX0ES2QCT',
        name: 'Plumbing',
        description: 'Leaks, blocked drains, taps, toilets and water heaters.',
        createdAt: '2026-03-09T08:02:11.000Z',
        updatedAt: '2026-03-09T08:02:11.000Z',
        version: 1,
      },
    },
  }),
  examplesOf(CategoryList, {
    firstPage: {
      summary: 'The first page of categories, newest first',
      value: {
        categories: [
          {
            id: 'cat_01M8TGT63TVYZFDPFYX0ES2QCT',
            name: 'Plumbing',
            description: 'Leaks, blocked drains, taps, toilets and water heaters.',
            createdAt: '2026-03-09T08:02:11.000Z',
            updatedAt: '2026-03-09T08:02:11.000Z',
            version: 1,
          },
        ],
        total: 1,
        limit: 50,
        offset: 0,
      },
    },
  }),
];
