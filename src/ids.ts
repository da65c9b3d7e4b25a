import { monotonicFactory } from 'ulidx';

/** Resource prefixes: an id says what it names (`rec_01J…`), and sorts by creation time. */
export const ID_PREFIXES = {
  organization: 'org',
  apiKey: 'key',
  category: 'cat',
  record: 'rec',
  recordEvent: 'rev',
  event: 'evt',
  asset: 'ast',
  location: 'loc',
  webhook: 'whk',
  delivery: 'dlv',
  deliveryAttempt: 'att',
  proof: 'prf',
  adminUser: 'usr',
  adminAuditEntry: 'aud',
  adminLoginAttempt: 'lga',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

// Monotonic within a process, so ids minted in the same millisecond still sort in creation order.
const nextUlid = monotonicFactory();

export function newId(kind: IdKind): string {
  return `${ID_PREFIXES[kind]}_${nextUlid()}`;
}

/** True when `value` has the shape of an id of this kind; used to answer 404 early on garbage ids. */
export function looksLikeId(kind: IdKind, value: string): boolean {
  return value.length === ID_PREFIXES[kind].length + 27 && value.startsWith(`${ID_PREFIXES[kind]}_`);
}
