import { isPublicAddress } from '../../src/lib/public-address';

describe('which addresses a webhook may be sent to', () => {
  test('when an address is globally routable unicast then it is public', () => {
    for (const address of ['93.184.215.14', '8.8.8.8', '198.17.255.255', '198.20.0.1', '2606:4700:4700::1111', '2a00:1450:4001:82b::200e', '::ffff:8.8.8.8']) {
      expect({ address, public: isPublicAddress(address) }).toEqual({ address, public: true });
    }
  });

  test('when an address is special-purpose, deprecated or embeds one then it is refused', () => {
    const refused = [
      // Private, loopback, link-local, CGNAT, this-network, broadcast, multicast.
      '10.1.2.3', '172.16.0.1', '192.168.0.10', '127.0.0.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '255.255.255.255', '224.0.0.1',
      // Benchmarking, documentation, IETF protocol assignments, 6to4 relay, reserved.
      '198.18.0.1', '198.19.255.254', '192.0.2.1', '198.51.100.7', '203.0.113.9', '192.0.0.8', '192.88.99.1', '240.0.0.1',
      // IPv6: loopback, unspecified, unique-local, link-local, site-local (deprecated), multicast.
      '::1', '::', 'fd00::1', 'fe80::1', 'fec0::1', 'feff::1', 'ff02::1',
      // IPv4-compatible (deprecated) and IPv4-mapped forms of private addresses, NAT64, 6to4, Teredo.
      '::127.0.0.1', '::10.0.0.1', '::8.8.8.8', '::ffff:127.0.0.1', '::ffff:198.18.0.1', '64:ff9b::a00:1', '64:ff9b:1::1', '2002:a00:1::1', '2001:0:4136:e378::1',
      // Documentation, benchmarking, discard, SRv6, unassigned space outside 2000::/3.
      '2001:db8::1', '3fff::1', '2001:2::1', '100::1', '5f00::1', '4000::1',
      'not-an-address',
    ];
    expect(refused.filter(isPublicAddress)).toEqual([]);
  });
});
