import { intervalLoop } from '../background-loop.js';
import { defineFeature } from '../feature.js';
import { adminRoutes } from './routes.js';
import { ADMIN_PREFIX } from './security.js';
import { AdminService } from './service.js';

declare module '../feature.js' {
  interface FeatureServices {
    admin: AdminService;
  }
}

const PURGE_INTERVAL_MS = 10 * 60_000;

/** The operators' admin area: server-rendered pages under /admin. */
export const adminFeature = defineFeature({
  name: 'admin',
  build({ database, clock, config, logger, registry, services }) {
    const { organizations, apiKeys, webhooks, events } = services;
    const admin = new AdminService(database.db, clock, apiKeys);
    return {
      services: { admin },
      pages: [{ plugin: adminRoutes({ admin, organizations, apiKeys, config, clock, scopes: registry.scopes, webhooks, events, eventTypes: registry.eventTypes }), prefix: ADMIN_PREFIX, sameOriginOnly: true }],
      jobs: [
        {
          placement: 'every-worker',
          periodMs: PURGE_INTERVAL_MS,
          does: 'deletes expired admin sessions, sign-in attempts and setup links',
          loop: intervalLoop({ name: 'admin-purge', intervalMs: PURGE_INTERVAL_MS, work: () => admin.purgeExpired(), logger, errorMessage: 'admin session purge failed' }),
        },
      ],
    };
  },
});
