import { EXAMPLE_IDS, examplesOf } from '../http/openapi-examples.js';
import { CreatedIntakeLinkSchema, CreateIntakeLinkBody, IntakeLinkList, IntakeLinkSchema, UpdateIntakeLinkBody } from './schemas.js';

const frontDoor = { name: 'Block B, front door', locationId: EXAMPLE_IDS.building, categoryId: EXAMPLE_IDS.category };
const link = {
  id: EXAMPLE_IDS.intakeLink,
  ...frontDoor,
  assetId: null,
  enabled: true,
  createdAt: '2026-03-09T16:00:00.000Z',
  updatedAt: '2026-03-09T16:00:00.000Z',
  version: 1,
};
const token = 'wit_q7Yb3kV9xN2mR8tW4pL6sD1fG5hJ0cZ-aE3uI7oK9yB';
const url = `https://wo.example.com/intake/${token}`;

export const intakeExamples = [
  examplesOf(CreateIntakeLinkBody, { frontDoor: { summary: 'A form for the front door of block B, filing plumbing-and-building requests', value: frontDoor } }),
  examplesOf(UpdateIntakeLinkBody, { disable: { summary: 'Switch the form off (its URL becomes a 404 until enabled again)', value: { enabled: false } } }),
  examplesOf(IntakeLinkSchema, { frontDoor: { summary: 'An enabled link (its token is never shown again)', value: link } }),
  examplesOf(CreatedIntakeLinkSchema, { created: { summary: 'As created or rotated: the token, the form’s URL and its QR code, this once', value: { ...link, token, url, qrUrl: `${url}/qr.svg` } } }),
  examplesOf(IntakeLinkList, { firstPage: { summary: 'The organization’s intake links, newest first', value: { intakeLinks: [link], total: 1, limit: 50, offset: 0 } } }),
];
