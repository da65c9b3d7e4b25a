import { EXAMPLE_IDS, examplesOf } from '../http/openapi-examples.js';
import { AnswerBody, AnswerSchema, AttachChecklistBody, ChecklistList, ChecklistSchema, CreateChecklistBody, RecordChecklistList, UpdateChecklistBody } from './schemas.js';

const items = [
  { key: 'flue_clear', label: 'Flue clear of obstructions', type: 'pass_fail' as const, required: true },
  { key: 'pressure', label: 'System pressure', type: 'number' as const, required: true, min: 1, max: 2, unit: 'bar', onFail: { categoryId: EXAMPLE_IDS.category, priority: 'HIGH' as const } },
  { key: 'signed_off', label: 'Customer signature', type: 'signature' as const, required: true },
];
const boiler = { id: EXAMPLE_IDS.checklist, name: 'Boiler inspection', version: 1, items, createdAt: '2026-03-09T08:01:00.000Z', updatedAt: '2026-03-09T08:01:00.000Z' };
const pressureAnswer = { key: 'pressure', value: 2.7, failed: true, answeredBy: 'api_key:key_01M8TGT60000000000000000KEY', answeredAt: '2026-03-10T09:12:00.000Z', followUpRecordId: EXAMPLE_IDS.followUp };

export const checklistExamples = [
  examplesOf(CreateChecklistBody, { boiler: { summary: 'A boiler inspection', description: 'A pressure outside 1–2 bar is failed and raises a follow-up work order.', value: { name: 'Boiler inspection', items } } }),
  examplesOf(UpdateChecklistBody, { rename: { summary: 'A new version with another name', value: { name: 'Annual boiler inspection' } } }),
  examplesOf(ChecklistSchema, { boiler: { summary: 'A boiler inspection at version 1', value: boiler } }),
  examplesOf(ChecklistList, { firstPage: { summary: 'The organization’s checklists', value: { checklists: [boiler], total: 1, limit: 50, offset: 0 } } }),
  examplesOf(AttachChecklistBody, { boiler: { summary: 'Give the work order the boiler inspection', value: { checklistId: EXAMPLE_IDS.checklist } } }),
  examplesOf(AnswerBody, {
    number: { summary: 'A number', value: { value: 2.7 } },
    signature: { summary: 'A signature', description: 'The image is an attachment of the work order.', value: { value: { name: 'Ann Example', attachmentId: EXAMPLE_IDS.signature } } },
  }),
  examplesOf(AnswerSchema, { failed: { summary: 'A failed answer and its follow-up', value: pressureAnswer } }),
  examplesOf(RecordChecklistList, {
    inProgress: {
      summary: 'One answer given, two required items missing',
      value: { checklists: [{ checklistId: EXAMPLE_IDS.checklist, version: 1, name: 'Boiler inspection', items, answers: [pressureAnswer], missing: ['flue_clear', 'signed_off'] }] },
    },
  }),
];
