import { defineFeature } from '../feature.js';
import { CHECKLIST_EVENTS } from './events.js';
import { checklistRoutes } from './routes.js';
import { checklistComponents } from './schemas.js';
import { checklistExamples } from './examples.js';
import { ChecklistService } from './service.js';

declare module '../feature.js' {
  interface FeatureServices {
    checklists: ChecklistService;
  }
}
declare module '../keys/scopes.js' {
  interface ScopeCatalogue extends Record<keyof typeof CHECKLIST_SCOPES, string> {}
}

const CHECKLIST_SCOPES = {
  'checklists:read': 'Read checklist templates.',
  'checklists:write': 'Create checklist templates and make new versions of them.',
} as const;

/** Checklists: versioned templates of typed items that work orders are given and answer, and whose completion waits for them. */
export const checklistsFeature = defineFeature({
  name: 'checklists',
  tags: [{ name: 'Checklists', description: 'Versioned checklists of typed items: work orders are given them, answer them, and cannot complete before their required items are answered. See docs/checklists.md.' }],
  scopes: CHECKLIST_SCOPES,
  events: CHECKLIST_EVENTS,
  schemas: checklistComponents,
  examples: checklistExamples,
  build({ database, clock, services }) {
    const checklists = new ChecklistService(database.db, clock, services.records, services.meters);
    services.records.giveChecklistsWith(checklists);
    return { services: { checklists }, api: checklistRoutes(checklists) };
  },
});
