import dns from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * The blocks of the IANA special-purpose address registries that are not globally reachable
 * (or are deprecated), written out here because ipaddr.js 1.x (the version Express also uses)
 * calls some of them `unicast`: 198.18.0.0/15 (benchmarking) and the IPv6 ones below 2000::/3
 * (site-local fec0::/10, IPv4-compatible ::a.b.c.d, discard 100::/64, SRv6 5f00::/16). Blocks
 * the library names as well are listed all the same, so the rule does not depend on its version.
 * A few global blocks inside 192.0.0.0/24 and 2001::/23 (anycast, AS112, AMT) are refused with
 * their parent block: no webhook receiver lives there.
 */
const NON_GLOBAL = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.88.99.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '240.0.0.0/4',
  '255.255.255.255/32',
  '64:ff9b::/96',
  '64:ff9b:1::/48',
  '2001::/23',
  '2001:db8::/32',
  '2002::/16',
  '3fff::/20',
].map((cidr) => ipaddr.parseCIDR(cidr));
const NON_GLOBAL_V4 = NON_GLOBAL.filter((b): b is [ipaddr.IPv4, number] => b[0].kind() === 'ipv4');
const NON_GLOBAL_V6 = NON_GLOBAL.filter((b): b is [ipaddr.IPv6, number] => b[0].kind() === 'ipv6');

/** IPv6 global unicast is allocated from 2000::/3 only; everything else is special or unassigned. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number];

/**
 * Whether an IP address is globally routable unicast, the only kind a webhook may be sent to:
 * ipaddr.js must call it `unicast` (not private, loopback, link-local, unique-local, CGNAT,
 * multicast, broadcast, unspecified, reserved, 6to4, Teredo, NAT64), it must lie outside every
 * non-global block of the IANA registries, and an IPv6 address must lie in 2000::/3. An
 * IPv4-mapped IPv6 address (::ffff:a.b.c.d) is judged as its IPv4 address.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  if (ip.range() !== 'unicast') return false;
  if (ip.kind() === 'ipv4') return !NON_GLOBAL_V4.some((block) => (ip as ipaddr.IPv4).match(block));
  const v6 = ip as ipaddr.IPv6;
  return v6.match(GLOBAL_UNICAST_V6) && !NON_GLOBAL_V6.some((block) => v6.match(block));
}

/** Why a host may not be called, or undefined when every address it resolves to is public. */
export async function refusedHost(host: string, allowPrivate: boolean): Promise<string | undefined> {
  const bare = host.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (isIP(bare)) {
    addresses = [bare];
  } else {
    try {
      addresses = (await dns.promises.lookup(bare, { all: true, verbatim: true })).map((a) => a.address);
    } catch {
      return 'not found';
    }
  }
  if (allowPrivate) return undefined;
  return addresses.every(isPublicAddress) ? undefined : 'private';
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.request that refuses hosts resolving to a non-public address, so the
 * address checked is the address connected to (DNS may change between save and delivery).
 */
export function publicLookup(allowPrivate: boolean) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses as dns.LookupAddress[];
      if (!allowPrivate && !list.every((a) => isPublicAddress(a.address))) {
        return callback(Object.assign(new Error(`${hostname} resolves to a private address`), { code: 'EPRIVATE' }), []);
      }
      if (options.all) return callback(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}
