import { randomBytes } from 'node:crypto';
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
  request: 'req',
  comment: 'cmt',
  schedule: 'sch',
  // `att` already names delivery attempts.
  attachment: 'file',
  meter: 'mtr',
  meterReading: 'rdg',
  person: 'per',
  team: 'tem',
  vendor: 'vnd',
  accessLink: 'lnk',
  part: 'prt',
  stockMovement: 'stm',
  labor: 'lab',
  // A part used on a work order (a line of its costs); `prt` names the part itself.
  partLine: 'pln',
  otherCost: 'cst',
  checklist: 'chk',
  customField: 'cfd',
  // `req` already names X-Request-Id values.
  workRequest: 'wrq',
  intakeLink: 'itk',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

// ulidx's default source asks the OS for one byte per character (16 calls per id, a visible share of
// a create's CPU: bench/analysis.md, "Findings"); a pool of the same crypto bytes is far cheaper,
// and byte / 256 keeps every base32 character uniform (the default's byte / 255 slightly favours
// the last one).
let randomPool = randomBytes(4096);
let randomPoolNext = 0;
function pooledRandom(): number {
  if (randomPoolNext === randomPool.length) {
    randomPool = randomBytes(4096);
    randomPoolNext = 0;
  }
  return randomPool[randomPoolNext++]! / 256;
}

// Monotonic within a process, so ids minted in the same millisecond still sort in creation order.
const nextUlid = monotonicFactory(pooledRandom);

export function newId(kind: IdKind): string {
  return `${ID_PREFIXES[kind]}_${nextUlid()}`;
}

/** True when `value` has the shape of an id of this kind; used to answer 404 early on garbage ids. */
export function looksLikeId(kind: IdKind, value: string): boolean {
  return value.length === ID_PREFIXES[kind].length + 27 && value.startsWith(`${ID_PREFIXES[kind]}_`);
}
