import { intervalLoop } from '../background-loop.js';
import { defineFeature } from '../feature.js';
import { AccessLinkService } from './access-links.js';
import { accessLinkRoutes } from './access-link-routes.js';
import { resolveAssignees } from './assignees.js';
import { PEOPLE_EVENTS } from './events.js';
import { PageBudgets } from '../http/page-budgets.js';
import { JOB_PREFIX, jobPageRoutes } from './job-routes.js';
import { directoryRoutes } from './routes.js';
import { peopleComponents } from './schemas.js';
import { peopleExamples } from './examples.js';
import { DirectoryService } from './service.js';

declare module '../feature.js' {
  interface FeatureServices {
    directory: DirectoryService;
    accessLinks: AccessLinkService;
  }
}
declare module '../keys/scopes.js' {
  interface ScopeCatalogue extends Record<keyof typeof PEOPLE_SCOPES, string> {}
}

const PEOPLE_SCOPES = {
  'people:read': 'Read people, teams and vendors.',
  'people:write': 'Create, edit, deactivate and delete people, teams and vendors.',
} as const;

const BUDGET_PURGE_INTERVAL_MS = 10 * 60_000;

/** People, teams and vendors: who work orders are assigned to; access links and the job page for those without a key. */
export const peopleFeature = defineFeature({
  name: 'people',
  tags: [{ name: 'People, teams and vendors', description: 'Who does the work: technicians, their teams and contractor companies, named by work orders’ `assignees`.' }],
  scopes: PEOPLE_SCOPES,
  events: PEOPLE_EVENTS,
  schemas: peopleComponents,
  examples: peopleExamples,
  build({ database, clock, config, logger, services }) {
    const { db } = database;
    const directory = new DirectoryService(db, clock, services.organizations);
    services.records.resolveAssigneesWith(resolveAssignees);
    const accessLinks = new AccessLinkService(db, clock, config.publicUrl);
    const budgets = new PageBudgets(db, clock, { namespace: 'job', perLink: config.jobPage.requestsPerLink, perAddress: config.jobPage.requestsPerAddress });
    const api = async (app: Parameters<ReturnType<typeof directoryRoutes>>[0]) => {
      await app.register(directoryRoutes(directory));
      await app.register(accessLinkRoutes(accessLinks));
    };
    return {
      services: { directory, accessLinks },
      api,
      pages: [
        {
          plugin: jobPageRoutes({ db, config, links: accessLinks, budgets, records: services.records, comments: services.comments, attachments: services.attachments, checklists: () => services.checklists }),
          prefix: JOB_PREFIX,
          sameOriginOnly: true,
        },
      ],
      jobs: [
        {
          placement: 'every-worker',
          periodMs: BUDGET_PURGE_INTERVAL_MS,
          does: 'deletes the public pages’ request budgets (job page, intake form) whose window is over',
          loop: intervalLoop({ name: 'job-page-budget-purge', intervalMs: BUDGET_PURGE_INTERVAL_MS, work: () => budgets.purgeEnded(), logger, errorMessage: 'purging job page budgets failed' }),
        },
      ],
    };
  },
});
