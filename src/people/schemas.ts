// @NOTE: the event catalogue imports this module, so it must not import events/ (no import cycle).
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { IdOf, Nullable, optionalExcept, StringEnum, Text, Timestamp } from '../http/schema-types.js';
import { ListQuery, listEnvelope } from '../http/pagination.js';
import { MoneyRef, MoneySchema } from '../money/schema.js';


export const MAX_TRADES = 20;
export const MAX_TEAM_MEMBERS = 200;

const Trades = Type.Array(Text(100), {
  maxItems: MAX_TRADES,
  uniqueItems: true,
  description: 'What they do (`plumbing`, `electrical`, `hvac`): up to 20, matched case-insensitively by the lists’ `trade` filter.',
});
const Email = Type.String({ format: 'email', maxLength: 254, description: 'Email address.' });
const Phone = Text(50, 'Phone number, as people write it.');
const ExternalRef = Text(200, 'Your own identifier (HR, ERP, accounting).');
const Active = Type.Boolean({ description: 'Whether it can be assigned (true by default). Deactivated, it stays on the work orders that already name it, and new assignments of it are refused (422).' });

/** Each field a person's creator sets and PATCH changes, in the order both bodies list them. */
const personFields = {
  name: Text(200, 'Full name, as work orders and the job page show it.'),
  email: Nullable(Email),
  phone: Nullable(Phone),
  externalRef: Nullable(ExternalRef),
  trades: Trades,
  hourlyRate: Nullable(MoneyRef('What an hour of their work costs, in the organization’s currency (422 `currency_mismatch` otherwise); null when not known.')),
  active: Active,
};

const vendorFields = {
  name: Text(200, 'Company name, as work orders and the job page show it.'),
  email: Nullable(Email),
  phone: Nullable(Phone),
  trades: Trades,
  externalRef: Nullable(ExternalRef),
  active: Active,
};

const teamFields = {
  name: Text(200, 'Team name (“Night shift”, “HVAC crew”).'),
  memberIds: Type.Array(IdOf('per', 'A person of your organization (`per_…`).'), {
    maxItems: MAX_TEAM_MEMBERS,
    uniqueItems: true,
    description: 'Its members, people of your organization, in the order to list them (up to 200). A PATCH replaces the whole list.',
  }),
  active: Active,
};

const common = {
  createdAt: Timestamp,
  updatedAt: Timestamp,
  version: Type.Integer({ description: 'Increases with every change; the ETag is this number in quotes.' }),
};

export const PersonSchema = Type.Object(
  {
    id: IdOf('per', 'Person identifier (`per_…`).'),
    name: Type.String(),
    email: Nullable(Type.String()),
    phone: Nullable(Type.String()),
    externalRef: Nullable(Type.String()),
    trades: Type.Array(Type.String()),
    hourlyRate: Nullable(MoneyRef()),
    active: Type.Boolean(),
    ...common,
  },
  { $id: 'Person', description: 'A technician or anyone else who does work: assignable to work orders, alone or through their teams.' },
);
export type Person = Static<typeof PersonSchema>;

export const VendorSchema = Type.Object(
  {
    id: IdOf('vnd', 'Vendor identifier (`vnd_…`).'),
    name: Type.String(),
    email: Nullable(Type.String()),
    phone: Nullable(Type.String()),
    trades: Type.Array(Type.String()),
    externalRef: Nullable(Type.String()),
    active: Type.Boolean(),
    ...common,
  },
  { $id: 'Vendor', description: 'A contractor company: assignable to work orders, and reachable without an account through an access link.' },
);
export type Vendor = Static<typeof VendorSchema>;

export const TeamSchema = Type.Object(
  {
    id: IdOf('tem', 'Team identifier (`tem_…`).'),
    name: Type.String(),
    memberIds: Type.Array(Type.String()),
    active: Type.Boolean(),
    ...common,
  },
  { $id: 'Team', description: 'A group of people: a work order assigned to it is on each member’s list (`GET /records?assigneeId=<person>`).' },
);
export type Team = Static<typeof TeamSchema>;

function bodies<P extends Record<string, TSchema>, R extends keyof P>(fields: P, required: readonly R[], noun: string, $id: string) {
  const create = Type.Object(optionalExcept(fields, required), { $id: `Create${$id}Request`, additionalProperties: false, description: `A new ${noun}.` });
  const update = Type.Object(optionalExcept(fields), {
    $id: `Update${$id}Request`,
    additionalProperties: false,
    minProperties: 1,
    description: 'Fields to change; null clears an optional one. Renaming changes no work order, history or proof that named the old name.',
  });
  return { create, update };
}

export const PersonBodies = bodies(personFields, ['name'], 'person', 'Person');
export const VendorBodies = bodies(vendorFields, ['name'], 'vendor', 'Vendor');
export const TeamBodies = bodies(teamFields, ['name'], 'team', 'Team');
export type CreatePersonInput = Static<typeof PersonBodies.create>;
export type UpdatePersonInput = Static<typeof PersonBodies.update>;
export type CreateVendorInput = Static<typeof VendorBodies.create>;
export type UpdateVendorInput = Static<typeof VendorBodies.update>;
export type CreateTeamInput = Static<typeof TeamBodies.create>;
export type UpdateTeamInput = Static<typeof TeamBodies.update>;

function directoryListQuery(noun: string, trade: string) {
  return ListQuery({
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: `Case-insensitive text contained in the ${noun}’s name${noun === 'team' ? '' : ', email, phone or externalRef'}.` })),
    active: Type.Optional(Type.Boolean({ description: 'true: only active ones; false: only deactivated ones.' })),
    trade: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: trade })),
    updatedAfter: Type.Optional(Type.String({ format: 'date-time', description: 'Only those changed at or after this instant (incremental sync; deletions come as `*.deleted` events).' })),
  });
}
export const PersonListQuery = directoryListQuery('person', 'Only people with this trade (case-insensitive).');
export const VendorListQuery = directoryListQuery('vendor', 'Only vendors with this trade (case-insensitive).');
export const TeamListQuery = directoryListQuery('team', 'Only teams with a member who has this trade (case-insensitive).');
export type DirectoryFilter = Omit<Static<typeof PersonListQuery>, 'limit' | 'offset'>;

export const PersonList = listEnvelope('people', Type.Ref('Person'), { $id: 'PersonList', description: 'A page of people, newest first.' });
export const VendorList = listEnvelope('vendors', Type.Ref('Vendor'), { $id: 'VendorList', description: 'A page of vendors, newest first.' });
export const TeamList = listEnvelope('teams', Type.Ref('Team'), { $id: 'TeamList', description: 'A page of teams, newest first.' });

// --- access links -------------------------------------------------------------------------------

export const HOLDER_TYPES = ['person', 'vendor'] as const;
export type HolderType = (typeof HOLDER_TYPES)[number];

/** The longest an access link may live. */
export const MAX_LINK_LIFETIME = 'P90D';

export const CreateAccessLinkBody = Type.Object(
  {
    vendorId: Type.Optional(IdOf('vnd', 'The vendor it is for (`vnd_…`); or `personId`.')),
    personId: Type.Optional(IdOf('per', 'The person it is for (`per_…`); or `vendorId`.')),
    expiresIn: Type.Optional(
      Type.String({ minLength: 2, maxLength: 40, description: 'How long it works, as an ISO 8601 duration (`P7D`, `PT12H`, `P2W`): at most P90D; P7D when left out.', examples: ['P7D'] }),
    ),
  },
  { $id: 'CreateAccessLinkRequest', additionalProperties: false, description: 'A link for one active vendor or person: name exactly one of `vendorId` and `personId`.' },
);
export type CreateAccessLinkInput = Static<typeof CreateAccessLinkBody>;

const LinkHolderSchema = Type.Object(
  { type: StringEnum(HOLDER_TYPES), id: Type.String(), name: Type.String({ description: 'Their name when the link was made.' }) },
  { description: 'Whom the link is for; what they do through it is attributed to `link:<id>` with their name.' },
);

const accessLinkFields = {
  id: IdOf('lnk', 'Access link identifier (`lnk_…`).'),
  recordId: Type.String(),
  holder: LinkHolderSchema,
  state: StringEnum(['active', 'expired', 'revoked'] as const),
  expiresAt: Timestamp,
  revokedAt: Nullable(Type.String()),
  lastUsedAt: Nullable(Type.String({ description: 'When its holder last did something through it (start, comment, photo, complete).' })),
  createdAt: Timestamp,
};

export const AccessLinkSchema = Type.Object(accessLinkFields, {
  $id: 'AccessLink',
  description: 'A link to the job page of one work order (`/job/{token}`), for someone without an API key. Its token is shown only once, when it is made.',
});
export type AccessLink = Static<typeof AccessLinkSchema>;

export const CreatedAccessLinkSchema = Type.Object(
  {
    ...accessLinkFields,
    url: Type.String({ description: 'The job page, to send to the holder: `WO_PUBLIC_URL/job/<token>`.' }),
    token: Type.String({ description: 'The secret in the URL, shown this once (stored only as its SHA-256). It is no API key: the API refuses it.' }),
  },
  { $id: 'CreatedAccessLink', description: 'A new access link, with its URL and token: the only time they are shown.' },
);
export type CreatedAccessLink = Static<typeof CreatedAccessLinkSchema>;

export const AccessLinkParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }), linkId: Type.String({ minLength: 1, maxLength: 64 }) });
export const AccessLinkListQuery = ListQuery({});
export const AccessLinkList = listEnvelope('accessLinks', Type.Ref('AccessLink'), { $id: 'AccessLinkList', description: 'A work order’s access links, newest first, revoked and expired ones included.' });

/** This feature's named schemas: registered once with the app, emitted as OpenAPI components. */
export const peopleComponents = [
  MoneySchema,
  PersonSchema,
  PersonBodies.create,
  PersonBodies.update,
  PersonList,
  TeamSchema,
  TeamBodies.create,
  TeamBodies.update,
  TeamList,
  VendorSchema,
  VendorBodies.create,
  VendorBodies.update,
  VendorList,
  AccessLinkSchema,
  CreateAccessLinkBody,
  CreatedAccessLinkSchema,
  AccessLinkList,
];
