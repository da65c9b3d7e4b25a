import { defineFeature } from '../feature.js';
import { resolveAssignees } from './assignees.js';
import { PEOPLE_EVENTS } from './events.js';
import { directoryRoutes } from './routes.js';
import { peopleComponents } from './schemas.js';
import { DirectoryService } from './service.js';

declare module '../feature.js' {
  interface FeatureServices {
    directory: DirectoryService;
  }
}
declare module '../keys/scopes.js' {
  interface ScopeCatalogue extends Record<keyof typeof PEOPLE_SCOPES, string> {}
}

const PEOPLE_SCOPES = {
  'people:read': 'Read people, teams and vendors.',
  'people:write': 'Create, edit, deactivate and delete people, teams and vendors.',
} as const;

/** People, teams and vendors: who work orders are assigned to; access links and the job page for those without a key. */
export const peopleFeature = defineFeature({
  name: 'people',
  tags: [{ name: 'People, teams and vendors', description: 'Who does the work: technicians, their teams and contractor companies, named by work orders’ `assignees`.' }],
  scopes: PEOPLE_SCOPES,
  events: PEOPLE_EVENTS,
  schemas: peopleComponents,
  build({ database, clock, services }) {
    const directory = new DirectoryService(database.db, clock, services.organizations);
    services.records.resolveAssigneesWith(resolveAssignees);
    return { services: { directory }, api: directoryRoutes(directory) };
  },
});
