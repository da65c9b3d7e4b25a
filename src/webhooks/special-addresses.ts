import ipaddr from 'ipaddr.js';

/**
 * Which IP addresses are global unicast destinations, after the IANA IPv4 and IPv6 Special-Purpose
 * Address Registries (RFC 6890 and the RFCs that added entries since) and the IANA address-space
 * registries (multicast; for IPv6, only 2000::/3 is allocated as global unicast).
 *
 * @NOTE: every address listed in a special-purpose registry is refused, even the few the registry
 * marks "globally reachable": those are anycast service addresses (PCP, TURN, DNS-SD SRP, AMT,
 * AS112), answered by the nearest instance, which may well sit inside the operator's own network,
 * or identifiers that are not routed (ORCHIDv2, DETs). No webhook receiver lives there. The only
 * special blocks judged otherwise are those that carry an IPv4 address a packet is delivered to
 * (IPv4-mapped, the NAT64 well-known prefix, 6to4): they are judged by that IPv4 address.
 */

export interface SpecialBlock {
  readonly prefix: string;
  readonly name: string;
}

export const IPV4_SPECIAL_PURPOSE: readonly SpecialBlock[] = [
  { prefix: '0.0.0.0/8', name: '"this network"' },
  { prefix: '0.0.0.0/32', name: '"this host on this network"' },
  { prefix: '10.0.0.0/8', name: 'private-use' },
  { prefix: '100.64.0.0/10', name: 'shared address space (carrier-grade NAT)' },
  { prefix: '127.0.0.0/8', name: 'loopback' },
  { prefix: '169.254.0.0/16', name: 'link-local' },
  { prefix: '172.16.0.0/12', name: 'private-use' },
  { prefix: '192.0.0.0/24', name: 'IETF protocol assignments' },
  { prefix: '192.0.0.0/29', name: 'IPv4 service continuity prefix' },
  { prefix: '192.0.0.8/32', name: 'IPv4 dummy address' },
  { prefix: '192.0.0.9/32', name: 'Port Control Protocol anycast' },
  { prefix: '192.0.0.10/32', name: 'TURN anycast' },
  { prefix: '192.0.0.170/32', name: 'NAT64/DNS64 discovery' },
  { prefix: '192.0.0.171/32', name: 'NAT64/DNS64 discovery' },
  { prefix: '192.0.2.0/24', name: 'documentation (TEST-NET-1)' },
  { prefix: '192.31.196.0/24', name: 'AS112-v4' },
  { prefix: '192.52.193.0/24', name: 'AMT' },
  { prefix: '192.88.99.0/24', name: 'deprecated 6to4 relay anycast' },
  { prefix: '192.88.99.2/32', name: '6a44 relay anycast' },
  { prefix: '192.168.0.0/16', name: 'private-use' },
  { prefix: '192.175.48.0/24', name: 'direct delegation AS112 service' },
  { prefix: '198.18.0.0/15', name: 'benchmarking' },
  { prefix: '198.51.100.0/24', name: 'documentation (TEST-NET-2)' },
  { prefix: '203.0.113.0/24', name: 'documentation (TEST-NET-3)' },
  { prefix: '240.0.0.0/4', name: 'reserved' },
  { prefix: '255.255.255.255/32', name: 'limited broadcast' },
];

/** From the IPv4 address-space registry rather than the special-purpose one. */
const IPV4_NOT_UNICAST: readonly SpecialBlock[] = [{ prefix: '224.0.0.0/4', name: 'multicast' }];

export const IPV6_SPECIAL_PURPOSE: readonly SpecialBlock[] = [
  { prefix: '::1/128', name: 'loopback' },
  { prefix: '::/128', name: 'unspecified' },
  { prefix: '::ffff:0:0/96', name: 'IPv4-mapped' },
  { prefix: '64:ff9b::/96', name: 'NAT64 well-known prefix' },
  { prefix: '64:ff9b:1::/48', name: 'local-use IPv4/IPv6 translation' },
  { prefix: '100::/64', name: 'discard-only' },
  { prefix: '100:0:0:1::/64', name: 'dummy IPv6 prefix' },
  { prefix: '2001::/23', name: 'IETF protocol assignments' },
  { prefix: '2001::/32', name: 'Teredo' },
  { prefix: '2001:1::1/128', name: 'Port Control Protocol anycast' },
  { prefix: '2001:1::2/128', name: 'TURN anycast' },
  { prefix: '2001:1::3/128', name: 'DNS-SD service registration protocol anycast' },
  { prefix: '2001:2::/48', name: 'benchmarking' },
  { prefix: '2001:3::/32', name: 'AMT' },
  { prefix: '2001:4:112::/48', name: 'AS112-v6' },
  { prefix: '2001:10::/28', name: 'deprecated ORCHID' },
  { prefix: '2001:20::/28', name: 'ORCHIDv2' },
  { prefix: '2001:30::/28', name: 'drone remote ID entity tags' },
  { prefix: '2001:db8::/32', name: 'documentation' },
  { prefix: '2002::/16', name: '6to4' },
  { prefix: '2620:4f:8000::/48', name: 'direct delegation AS112 service' },
  { prefix: '3fff::/20', name: 'documentation' },
  { prefix: '5f00::/16', name: 'segment routing (SRv6) SIDs' },
  { prefix: 'fc00::/7', name: 'unique-local' },
  { prefix: 'fe80::/10', name: 'link-local unicast' },
];

/** From the IPv6 address-space registry: named here for a clearer refusal than "outside 2000::/3". */
const IPV6_NOT_UNICAST: readonly SpecialBlock[] = [
  { prefix: '::/96', name: 'deprecated IPv4-compatible' },
  { prefix: 'fec0::/10', name: 'deprecated site-local' },
  { prefix: 'ff00::/8', name: 'multicast' },
];

type Parsed = ipaddr.IPv4 | ipaddr.IPv6;
interface CompiledBlock extends SpecialBlock {
  readonly range: [Parsed, number];
}

function compile(blocks: readonly SpecialBlock[]): CompiledBlock[] {
  // Longest prefix first: the most specific entry names the address.
  return blocks.map((block) => ({ ...block, range: ipaddr.parseCIDR(block.prefix) })).sort((a, b) => b.range[1] - a.range[1]);
}

const IPV4_BLOCKS = compile([...IPV4_SPECIAL_PURPOSE, ...IPV4_NOT_UNICAST]);
const IPV6_BLOCKS = compile([...IPV6_SPECIAL_PURPOSE, ...IPV6_NOT_UNICAST]);
const IPV6_GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number];
/** Blocks whose addresses deliver to an IPv4 address they carry, and how to name that form. */
const EMBEDS_IPV4 = new Map([
  ['::ffff:0:0/96', 'the IPv4-mapped form'],
  ['64:ff9b::/96', 'the NAT64 (64:ff9b::/96) form'],
  ['2002::/16', 'a 6to4 address'],
]);

function blockOf(address: Parsed): CompiledBlock | undefined {
  const blocks = address.kind() === 'ipv4' ? IPV4_BLOCKS : IPV6_BLOCKS;
  return blocks.find((block) => block.range[0].kind() === address.kind() && address.match(block.range));
}

/** The IPv4 address an IPv4-mapped, NAT64 (RFC 6052 /96) or 6to4 (RFC 3056) address delivers to. */
function embeddedIpv4(address: ipaddr.IPv6, prefix: string): ipaddr.IPv4 {
  const [high, low] = prefix === '2002::/16' ? [address.parts[1]!, address.parts[2]!] : [address.parts[6]!, address.parts[7]!];
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/**
 * Parses an address as Node and the OS read it. ipaddr.js reads an IPv6 address written with a
 * dotted IPv4 tail as IPv4-mapped even without `ffff` (`::127.0.0.1` becomes `::ffff:7f00:1`), and
 * Node writes IPv4-compatible addresses that way: the tail is turned into hex groups first.
 */
export function parseAddress(text: string): Parsed | undefined {
  const hexTail = text.includes(':')
    ? text.replace(/(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/, (match, a: string, b: string, c: string, d: string) => {
        const [p, q, r, t] = [a, b, c, d].map(Number) as [number, number, number, number];
        return [p, q, r, t].every((octet) => octet <= 255) ? `${((p << 8) | q).toString(16)}:${((r << 8) | t).toString(16)}` : match;
      })
    : text;
  return ipaddr.isValid(hexTail) ? ipaddr.parse(hexTail) : undefined;
}

/**
 * Why `address` is not a global unicast destination (completing "the address …"), or undefined when
 * it is one.
 */
export function nonGlobalReason(address: Parsed): string | undefined {
  const block = blockOf(address);
  const form = block && EMBEDS_IPV4.get(block.prefix);
  if (block && form) {
    const ipv4 = embeddedIpv4(address as ipaddr.IPv6, block.prefix);
    const reason = nonGlobalReason(ipv4);
    return reason && `is ${form} of ${ipv4.toString()}, which ${reason}`;
  }
  if (block) return `is in ${block.prefix} (${block.name})`;
  if (address.kind() === 'ipv6' && !address.match(IPV6_GLOBAL_UNICAST)) {
    return 'is outside 2000::/3, the only IPv6 space allocated for global unicast (reserved or unallocated)';
  }
  return undefined;
}
