import { EXAMPLE_IDS, examplesOf } from '../http/openapi-examples.js';
import { ApproveRequestBody, CreateWorkRequestBody, RejectRequestBody, RequestAttachmentList, RequestAttachmentSchema, WorkRequestList, WorkRequestSchema } from './schemas.js';

const leak = {
  description: 'Water drips from the ceiling above the bathroom sink.',
  requesterName: 'Ann Example',
  requesterEmail: 'ann@example.com',
  title: 'Leak in flat 4B',
  address: '12 Example Street, flat 4B',
  locationId: EXAMPLE_IDS.building,
};
const submitted = {
  id: EXAMPLE_IDS.workRequest,
  status: 'SUBMITTED' as const,
  channel: 'api' as const,
  intakeLinkId: null,
  ...leak,
  requesterPhone: null,
  assetId: null,
  categoryId: null,
  recordId: null,
  rejectionReason: null,
  decidedAt: null,
  createdAt: '2026-03-10T07:30:00.000Z',
  updatedAt: '2026-03-10T07:30:00.000Z',
  version: 1,
};
const approved = { ...submitted, status: 'APPROVED' as const, categoryId: EXAMPLE_IDS.category, recordId: EXAMPLE_IDS.record, decidedAt: '2026-03-10T08:05:00.000Z', updatedAt: '2026-03-10T08:05:00.000Z', version: 2 };
const rejected = { ...submitted, status: 'REJECTED' as const, rejectionReason: 'The landlord repairs the building’s roof; we have told them.', decidedAt: '2026-03-10T08:05:00.000Z', updatedAt: '2026-03-10T08:05:00.000Z', version: 2 };

const photo = {
  id: EXAMPLE_IDS.attachment,
  requestId: EXAMPLE_IDS.workRequest,
  recordId: null,
  filename: 'leak.jpg',
  mediaType: 'image/jpeg',
  size: 183_204,
  sha256: '9f2c1d5e8b7a4c3f6e0d1b2a5c8f7e6d4b3a2c1f0e9d8c7b6a5f4e3d2c1b0a9f',
  createdAt: '2026-03-10T07:30:00.000Z',
};

export const requestExamples = [
  examplesOf(CreateWorkRequestBody, { leak: { summary: 'A tenant reports a leak', value: leak } }),
  examplesOf(WorkRequestSchema, {
    submitted: { summary: 'Waiting for a decision', value: submitted },
    approved: { summary: 'Approved: its work order is `recordId`', value: approved },
    rejected: { summary: 'Rejected, with the reason the requester sees', value: rejected },
  }),
  examplesOf(WorkRequestList, { firstPage: { summary: 'The organization’s requests, newest first', value: { requests: [submitted], total: 1, limit: 50, offset: 0 } } }),
  examplesOf(ApproveRequestBody, { plumbing: { summary: 'Approve it as urgent plumbing', value: { categoryId: EXAMPLE_IDS.category, priority: 'HIGH' } } }),
  examplesOf(RejectRequestBody, { landlord: { summary: 'Not ours to fix', value: { reason: rejected.rejectionReason } } }),
  examplesOf(RequestAttachmentSchema, { photo: { summary: 'A photo of the leak, on the request until it is approved', value: photo } }),
  examplesOf(RequestAttachmentList, {
    photo: {
      summary: 'The photo that came with it',
      value: {
        attachments: [photo],
        total: 1,
        limit: 50,
        offset: 0,
      },
    },
  }),
];
