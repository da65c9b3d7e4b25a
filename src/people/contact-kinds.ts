import type { EventType } from '../events/catalogue.js';
import { toPerson, toVendor } from './repository.js';
import type { Person, Vendor } from './schemas.js';
import type { PeopleTable, VendorsTable } from './tables.js';

/** People and vendors share their contact columns, trades and rules; a person also has an hourly rate and teams. */
export type ContactTable = 'people' | 'vendors';
export type ContactRows = { people: PeopleTable; vendors: VendorsTable };
export type ContactEntries = { people: Person; vendors: Vendor };
export interface ContactKind<T extends ContactTable> {
  table: T;
  noun: string;
  idKind: 'person' | 'vendor';
  /** The event payload's keys: the id and the entry. */
  idKey: string;
  payloadKey: string;
  events: { created: EventType; updated: EventType; deleted: EventType };
  /** What the `*.updated` event's `changes` compares. */
  fields: readonly string[];
  present(row: ContactRows[T]): ContactEntries[T];
}

export const PERSON: ContactKind<'people'> = {
  table: 'people',
  noun: 'Person',
  idKind: 'person',
  idKey: 'personId',
  payloadKey: 'person',
  events: { created: 'person.created', updated: 'person.updated', deleted: 'person.deleted' },
  fields: ['name', 'email', 'phone', 'externalRef', 'trades', 'hourlyRate', 'active'],
  present: toPerson,
};
export const VENDOR: ContactKind<'vendors'> = {
  table: 'vendors',
  noun: 'Vendor',
  idKind: 'vendor',
  idKey: 'vendorId',
  payloadKey: 'vendor',
  events: { created: 'vendor.created', updated: 'vendor.updated', deleted: 'vendor.deleted' },
  fields: ['name', 'email', 'phone', 'trades', 'externalRef', 'active'],
  present: toVendor,
};
