import dns from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Whether an IP address is on the public internet: not private (10/8, 172.16/12, 192.168/16),
 * loopback, link-local, unique-local (fc00::/7), CGNAT (100.64/10), multicast, broadcast,
 * unspecified or reserved. An IPv4-mapped IPv6 address is judged as its IPv4 address.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  return ip.range() === 'unicast';
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
