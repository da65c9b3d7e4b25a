import { defineFeature } from '../feature.js';
import { COMMENT_EVENTS } from './events.js';
import { commentRoutes } from './routes.js';
import { commentComponents } from './schemas.js';
import { commentExamples } from './examples.js';
import { CommentService } from './service.js';

declare module '../feature.js' {
  interface FeatureServices {
    comments: CommentService;
  }
}

/** Comments on work orders: under /records/{id}/comments, with the work orders' scopes. */
export const commentsFeature = defineFeature({
  name: 'comments',
  events: COMMENT_EVENTS,
  schemas: commentComponents,
  examples: commentExamples,
  build({ database, clock }) {
    const comments = new CommentService(database.db, clock);
    return { services: { comments }, api: commentRoutes(comments) };
  },
});
