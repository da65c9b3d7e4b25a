import { defineFeature } from '../feature.js';
import { REQUEST_EVENTS } from './events.js';
import { requestRoutes } from './routes.js';
import { requestAttachmentRoutes } from './attachment-routes.js';
import { requestComponents } from './schemas.js';
import { requestExamples } from './examples.js';
import { RequestService } from './service.js';

declare module '../feature.js' {
  interface FeatureServices {
    requests: RequestService;
  }
}
declare module '../keys/scopes.js' {
  interface ScopeCatalogue extends Record<keyof typeof REQUEST_SCOPES, string> {}
}

const REQUEST_SCOPES = {
  'requests:read': 'Read work requests and their attachments.',
  'requests:write': 'File work requests; approve (with records:write), reject and cancel them.',
} as const;

/** Work requests: asked for by people without a say over work orders, decided once by staff (docs/requests.md). */
export const requestsFeature = defineFeature({
  name: 'requests',
  tags: [{ name: 'Work requests', description: 'Requests for work, filed through the API or an intake link, approved into work orders or rejected with a reason. See docs/requests.md.' }],
  scopes: REQUEST_SCOPES,
  events: REQUEST_EVENTS,
  schemas: requestComponents,
  examples: requestExamples,
  build({ database, clock, config, services }) {
    const requests = new RequestService(database.db, clock, services.records, services.attachments);
    const api = async (app: Parameters<ReturnType<typeof requestRoutes>>[0]) => {
      await app.register(requestRoutes(requests));
      await app.register(requestAttachmentRoutes(requests, config.attachments.maxBytes));
    };
    return { services: { requests }, api };
  },
});
