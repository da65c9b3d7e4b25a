import dns from 'node:dns';
import net from 'node:net';
import { nonGlobalReason, parseAddress } from './special-addresses.js';

/**
 * The server-side request forgery guard for webhook URLs.
 *
 * @NOTE: a webhook makes this server send requests wherever a tenant says. Without the guard a
 * tenant could reach our loopback services, the private network, or the cloud metadata endpoint
 * (169.254.169.254) and read answers back through the delivery log. Only global unicast addresses
 * pass (see special-addresses.ts: the IANA special-purpose registries, and for IPv6 only 2000::/3);
 * IPv4-mapped, NAT64 and 6to4 addresses are judged by the IPv4 address they carry. The check runs at create/update AND on every new connection the worker opens (see
 * `guardedLookup`), so a host that re-resolves to a private address later (DNS rebinding) is
 * refused at delivery time, and the connection goes to exactly the address that was checked.
 */

export interface UrlGuardOptions {
  /** Development and tests: receivers on loopback/private networks are allowed. */
  allowPrivateUrls: boolean;
  /** Resolves a host name to all its addresses; node:dns by default. */
  resolve?: (hostname: string) => Promise<string[]>;
}

/** `nonPublic`: the URL is well-formed but leads to an address that is not public (loopback, private, metadata…). */
export type UrlProblem = { ok: false; reason: string; nonPublic?: true };
export type UrlCheck = { ok: true; url: URL } | UrlProblem;

export const MAX_WEBHOOK_URL_LENGTH = 2048;

const CLOUD_METADATA_ADDRESS = '169.254.169.254';

/** Why an address may not receive webhooks (completing "the address …"), or undefined when it may. */
export function forbiddenAddressReason(address: string): string | undefined {
  const parsed = parseAddress(address);
  if (!parsed) return 'is not an IP address';
  const reason = nonGlobalReason(parsed);
  if (reason && parsed.toString() === CLOUD_METADATA_ADDRESS) return `is the cloud metadata address, ${reason.replace(/^is /, '')}`;
  return reason;
}

export async function resolveAll(hostname: string): Promise<string[]> {
  const found = await dns.promises.lookup(hostname, { all: true, verbatim: true });
  return found.map((entry) => entry.address);
}

/** Strips the brackets WHATWG URL keeps around IPv6 literals. */
function bareHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** Checks the form of a URL (absolute http/https, no credentials); no network access. */
export function checkUrlForm(raw: string): UrlCheck {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) return { ok: false, reason: `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'must be an absolute http:// or https:// URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, reason: 'must use http or https' };
  if (url.username || url.password) return { ok: false, reason: 'must not contain credentials' };
  if (!url.hostname) return { ok: false, reason: 'must name a host' };
  return { ok: true, url };
}

/** Full check used when a subscription is created or its URL changes: form, then every resolved address. */
export async function checkWebhookUrl(raw: string, options: UrlGuardOptions): Promise<UrlCheck> {
  const form = checkUrlForm(raw);
  if (!form.ok || options.allowPrivateUrls) return form;
  const host = bareHost(form.url);
  let addresses: string[];
  if (net.isIP(host)) addresses = [host];
  else {
    try {
      addresses = await (options.resolve ?? resolveAll)(host);
    } catch {
      return { ok: false, reason: `names host "${host}", which does not resolve` };
    }
    if (addresses.length === 0) return { ok: false, reason: `names host "${host}", which does not resolve` };
  }
  for (const address of addresses) {
    const reason = forbiddenAddressReason(address);
    if (reason) return { ok: false, reason: `resolves to ${address}, which ${reason}; only public addresses may receive webhooks`, nonPublic: true };
  }
  return form;
}

/** Refusal of a connection by the guard; the worker treats it as a permanent failure. */
export class ForbiddenAddressError extends Error {
  override name = 'ForbiddenAddressError';
  readonly code = 'WO_FORBIDDEN_ADDRESS';
}

/** The host part of a URL when it is an IP literal (Node connects to those without a lookup). */
export function literalAddressProblem(url: URL): string | undefined {
  const host = bareHost(url);
  if (!net.isIP(host)) return undefined;
  const reason = forbiddenAddressReason(host);
  return reason ? `${host} ${reason}` : undefined;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net/tls.connect (passed through undici's `connect` options): resolves the host,
 * refuses it if ANY address is forbidden, and hands the socket the checked addresses, so the
 * connection is pinned to what was checked.
 */
export function guardedLookup(hostname: string, options: dns.LookupOptions, callback: LookupCallback): void {
  dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '');
    for (const { address } of addresses) {
      const reason = forbiddenAddressReason(address);
      if (reason) return callback(new ForbiddenAddressError(`${hostname} resolves to ${address}, which ${reason}`), '');
    }
    if (addresses.length === 0) return callback(Object.assign(new Error(`${hostname} does not resolve`), { code: 'ENOTFOUND' }), '');
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0]!.address, addresses[0]!.family);
  });
}
