import { parseVerifierKey } from './checkpoint.js';
import { bytesEqual } from './encoding.js';
import type { Sha256, SyncSha256 } from './merkle.js';
import { parseCosignerVkey, parseCosignerVkeySync, type CosignerKey } from './cosignature.js';

/**
 * C2SP tlog-policy (https://c2sp.org/tlog-policy, the editor's copy: the specification has no tagged
 * release yet): which logs and witnesses a verifier knows and which subsets of witnesses make a quorum.
 *
 *   log <vkey> [<url>]
 *   witness <name> <vkey> [<url>]
 *   group <name> all|any|<k> <name>...
 *   quorum <name>            (`none`: no cosignature needed)
 *
 * Browser-safe: the /verify page parses the policy it is given with this file.
 */

export interface PolicyWitness {
  name: string;
  key: CosignerKey;
  url: string | undefined;
}

export interface PolicyGroup {
  name: string;
  threshold: number;
  members: string[];
}

export interface WitnessPolicy {
  logs: Array<{ name: string; keyId: Uint8Array; publicKey: Uint8Array; url: string | undefined }>;
  witnesses: PolicyWitness[];
  groups: PolicyGroup[];
  /** A witness's or group's name, or `none`. */
  quorum: string;
}

/** The spec asks implementations to support at least 32 of each; more is refused, not silently cut. */
const MAX_ENTRIES = 32;

export class PolicyError extends Error {
  override name = 'PolicyError';
}

/** Parses a policy file; throws PolicyError naming the line that is wrong. */
export async function parseWitnessPolicy(sha256: Sha256, text: string): Promise<WitnessPolicy> {
  if (typeof text !== 'string') throw new PolicyError('the policy is not text');
  // Key ids take SHA-256, which is asynchronous in browsers: the witnesses' vkeys are read first.
  const vkeys = [...text.matchAll(/^[ \t]*witness[ \t]+\S+[ \t]+(\S+)/gm)].map((match) => match[1]!);
  const keys = new Map(await Promise.all(vkeys.map(async (vkey) => [vkey, await parseCosignerVkey(sha256, vkey)] as const)));
  return parsePolicyText(text, (vkey) => keys.get(vkey) ?? 'not a vkey');
}

/** parseWitnessPolicy with a synchronous SHA-256 (the service reads WO_WITNESS_POLICY at start). */
export function parseWitnessPolicySync(sha256: SyncSha256, text: string): WitnessPolicy {
  return parsePolicyText(text, (vkey) => parseCosignerVkeySync(sha256, vkey));
}

function parsePolicyText(text: string, cosignerKey: (vkey: string) => CosignerKey | string): WitnessPolicy {
  if (typeof text !== 'string') throw new PolicyError('the policy is not text');
  // Tab and newline are the only control characters a policy may hold.
  if ([...text].some((c) => (c < ' ' && c !== '\t' && c !== '\n') || c === '\x7f')) throw new PolicyError('the policy holds a control character other than tab and newline');
  const policy: WitnessPolicy = { logs: [], witnesses: [], groups: [], quorum: '' };
  const defined = new Set<string>(['none']);
  let quorumLine = 0;
  const lines = text.split('\n');
  for (const [i, raw] of lines.entries()) {
    const where = `line ${i + 1}`;
    const line = raw.replace(/^[ \t]+|[ \t]+$/g, '');
    if (line === '' || line.startsWith('#')) continue;
    const [keyword, ...args] = line.split(/[ \t]+/);
    if (keyword === 'log') {
      if (args.length < 1 || args.length > 2) throw new PolicyError(`${where}: expected "log <vkey> [<url>]"`);
      const key = parseVerifierKey(args[0]!);
      if (!key) throw new PolicyError(`${where}: the log's vkey is not an Ed25519 verifier key`);
      if (policy.logs.some((log) => bytesEqual(log.publicKey, key.publicKey))) throw new PolicyError(`${where}: the same log key is listed twice`);
      policy.logs.push({ ...key, url: args[1] });
    } else if (keyword === 'witness') {
      if (args.length < 2 || args.length > 3) throw new PolicyError(`${where}: expected "witness <name> <vkey> [<url>]"`);
      const name = args[0]!;
      if (defined.has(name)) throw new PolicyError(`${where}: the name "${name}" is already defined`);
      const key = cosignerKey(args[1]!);
      if (typeof key === 'string') throw new PolicyError(`${where}: the witness's vkey: ${key}`);
      if (policy.witnesses.some((w) => bytesEqual(w.key.publicKey, key.publicKey))) throw new PolicyError(`${where}: the same witness key is listed twice`);
      policy.witnesses.push({ name, key, url: args[2] });
      defined.add(name);
    } else if (keyword === 'group') {
      if (args.length < 3) throw new PolicyError(`${where}: expected "group <name> all|any|<k> <name>..."`);
      const [name, thresholdText, ...members] = args as [string, string, ...string[]];
      if (defined.has(name)) throw new PolicyError(`${where}: the name "${name}" is already defined`);
      for (const member of members) {
        if (member === 'none' || !defined.has(member)) throw new PolicyError(`${where}: "${member}" is not a witness or group defined above`);
      }
      if (new Set(members).size !== members.length) throw new PolicyError(`${where}: a member is listed twice`);
      let threshold: number;
      if (thresholdText === 'all') threshold = members.length;
      else if (thresholdText === 'any') threshold = 1;
      else if (/^[1-9][0-9]*$/.test(thresholdText) && Number(thresholdText) <= members.length) threshold = Number(thresholdText);
      else throw new PolicyError(`${where}: the threshold must be all, any or a number from 1 to ${members.length}`);
      policy.groups.push({ name, threshold, members });
      defined.add(name);
    } else if (keyword === 'quorum') {
      if (args.length !== 1) throw new PolicyError(`${where}: expected "quorum <name>"`);
      if (quorumLine) throw new PolicyError(`${where}: a second quorum line (the first is line ${quorumLine})`);
      if (!defined.has(args[0]!)) throw new PolicyError(`${where}: "${args[0]}" is not a witness or group defined above`);
      policy.quorum = args[0]!;
      quorumLine = i + 1;
    } else {
      throw new PolicyError(`${where}: unknown keyword "${keyword}" (log, witness, group, quorum)`);
    }
  }
  if (!quorumLine) throw new PolicyError('the policy has no quorum line');
  if (policy.logs.length > MAX_ENTRIES || policy.witnesses.length > MAX_ENTRIES || policy.groups.length > MAX_ENTRIES) {
    throw new PolicyError(`at most ${MAX_ENTRIES} logs, ${MAX_ENTRIES} witnesses and ${MAX_ENTRIES} groups`);
  }
  return policy;
}

/** Whether the witnesses named in `cosigned` satisfy the policy's quorum. */
export function quorumMet(policy: WitnessPolicy, cosigned: ReadonlySet<string>): boolean {
  if (policy.quorum === 'none') return true;
  const groups = new Map(policy.groups.map((group) => [group.name, group]));
  const satisfied = (name: string): boolean => {
    const group = groups.get(name);
    if (!group) return cosigned.has(name);
    return group.members.filter(satisfied).length >= group.threshold;
  };
  return satisfied(policy.quorum);
}

/**
 * The earliest time by which the witnesses that cosigned (name → cosignature time) made a quorum:
 * for "k of n" the k-th earliest time. Undefined when they never do. With `quorum none`, undefined
 * too: no witness bounds the time.
 */
export function quorumTime(policy: WitnessPolicy, times: ReadonlyMap<string, number>): number | undefined {
  if (policy.quorum === 'none') return undefined;
  const byTime = [...times.entries()].sort((a, b) => a[1] - b[1]);
  const seen = new Set<string>();
  for (const [name, time] of byTime) {
    seen.add(name);
    if (quorumMet(policy, seen)) return time;
  }
  return undefined;
}
