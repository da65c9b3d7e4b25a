import { EXAMPLE_IDS, examplesOf } from '../http/openapi-examples.js';
import {
  AccessLinkList,
  CreateAccessLinkBody,
  CreatedAccessLinkSchema,
  PersonBodies,
  PersonList,
  PersonSchema,
  TeamBodies,
  TeamList,
  TeamSchema,
  VendorBodies,
  VendorList,
  VendorSchema,
  type Person,
  type Team,
  type Vendor,
} from './schemas.js';

const harbourPlumbing: Vendor = {
  id: 'vnd_01M8TGT5ZK3W6QH2D9RJ7XBN4A',
  name: 'Harbour Plumbing Ltd',
  email: 'jobs@harbour-plumbing.example.com',
  phone: '+44 23 9249 6000',
  trades: ['plumbing', 'heating'],
  externalRef: 'SUP-00412',
  active: true,
  createdAt: '2026-03-02T08:30:11.204Z',
  updatedAt: '2026-03-02T08:30:11.204Z',
  version: 1,
};

const samOkafor: Person = {
  id: 'per_01M8TGT5ZP8C2Y4F6HKM9TRV3E',
  name: 'Sam Okafor',
  email: 'sam.okafor@harbour-plumbing.example.com',
  phone: '+44 7700 900456',
  externalRef: 'HP-TECH-017',
  trades: ['plumbing', 'heating'],
  hourlyRate: { amount: '45.00', currency: 'USD' },
  active: true,
  createdAt: '2026-03-02T08:32:45.918Z',
  updatedAt: '2026-03-02T08:32:45.918Z',
  version: 1,
};

const plumbingCrew: Team = {
  id: 'tem_01M8TGT5ZT5N7B3G8JWQ2XDF6K',
  name: 'Harbour Road plumbing',
  memberIds: ['per_01M8TGT5ZP8C2Y4F6HKM9TRV3E'],
  active: true,
  createdAt: '2026-03-02T08:35:02.377Z',
  updatedAt: '2026-03-02T08:35:02.377Z',
  version: 1,
};

const tapLink = {
  id: 'lnk_01M8TGT67A4H9EX3KQ2W7NTB5R',
  recordId: 'rec_01M8TGT66B5T35ATMCVERCFDDH',
  holder: { type: 'vendor' as const, id: 'vnd_01M8TGT5ZK3W6QH2D9RJ7XBN4A', name: 'Harbour Plumbing Ltd' },
  expiresAt: '2026-03-16T10:03:40.118Z',
  createdAt: '2026-03-09T10:03:40.118Z',
};

export const peopleExamples = [
  examplesOf(VendorBodies.create, {
    harbourPlumbing: {
      summary: 'The plumbing contractor of the site',
      value: { name: 'Harbour Plumbing Ltd', email: 'jobs@harbour-plumbing.example.com', phone: '+44 23 9249 6000', trades: ['plumbing', 'heating'], externalRef: 'SUP-00412' },
    },
  }),
  examplesOf(VendorBodies.update, {
    moreTrades: { summary: 'They now clear drains too', value: { trades: ['plumbing', 'heating', 'drainage'] } },
  }),
  examplesOf(PersonBodies.create, {
    samOkafor: {
      summary: 'The contractor’s technician, with an hourly rate',
      description: '`hourlyRate` is in your organization’s currency (USD unless it was set otherwise).',
      value: {
        name: 'Sam Okafor',
        email: 'sam.okafor@harbour-plumbing.example.com',
        phone: '+44 7700 900456',
        externalRef: 'HP-TECH-017',
        trades: ['plumbing', 'heating'],
        hourlyRate: { amount: '45.00', currency: 'USD' },
      },
    },
  }),
  examplesOf(PersonBodies.update, {
    newRate: { summary: 'A new hourly rate from April', value: { hourlyRate: { amount: '48.50', currency: 'USD' } } },
  }),
  examplesOf(TeamBodies.create, {
    plumbingCrew: {
      summary: 'The site’s plumbing crew',
      description: 'Each of `memberIds` is the `id` answered by createPerson.',
      value: { name: 'Harbour Road plumbing', memberIds: [EXAMPLE_IDS.person] },
    },
  }),
  examplesOf(TeamBodies.update, {
    rename: { summary: 'Rename the team', value: { name: 'Harbour Road plumbing and heating' } },
  }),
  examplesOf(CreateAccessLinkBody, {
    forVendor: {
      summary: 'A week’s link for the contractor',
      description: '`vendorId` is the `id` answered by createVendor.',
      value: { vendorId: EXAMPLE_IDS.vendor, expiresIn: 'P7D' },
    },
  }),
  // Answers.
  examplesOf(VendorSchema, { harbourPlumbing: { summary: 'A contractor company', value: harbourPlumbing } }),
  examplesOf(VendorList, { firstPage: { summary: 'The first page of vendors, newest first', value: { vendors: [harbourPlumbing], total: 1, limit: 50, offset: 0 } } }),
  examplesOf(PersonSchema, { samOkafor: { summary: 'A technician with an hourly rate', value: samOkafor } }),
  examplesOf(PersonList, { firstPage: { summary: 'The first page of people, newest first', value: { people: [samOkafor], total: 1, limit: 50, offset: 0 } } }),
  examplesOf(TeamSchema, { plumbingCrew: { summary: 'A team of one', value: plumbingCrew } }),
  examplesOf(TeamList, { firstPage: { summary: 'The first page of teams, newest first', value: { teams: [plumbingCrew], total: 1, limit: 50, offset: 0 } } }),
  examplesOf(CreatedAccessLinkSchema, {
    forVendor: {
      summary: 'A new link, its URL and token shown this once',
      value: {
        ...tapLink,
        state: 'active',
        revokedAt: null,
        lastUsedAt: null,
        url: 'https://work-orders.example.com/job/wol_leEIhKlUwA4PW50MS47HfJZQ-M0eiGbtwUt9Yjzx9P8',
        token: 'wol_leEIhKlUwA4PW50MS47HfJZQ-M0eiGbtwUt9Yjzx9P8',
      },
    },
  }),
  examplesOf(AccessLinkList, {
    revoked: {
      summary: 'A work order’s link, revoked once the job was done',
      value: { accessLinks: [{ ...tapLink, state: 'revoked', revokedAt: '2026-03-12T10:02:37.420Z', lastUsedAt: null }], total: 1, limit: 50, offset: 0 },
    },
  }),
];
