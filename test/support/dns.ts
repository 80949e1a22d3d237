import dns2 from 'dns2';

type RecordType = 'TXT' | 'CNAME' | 'MX';

export interface TestDnsServer {
  /** `127.0.0.1:<port>`, for DNS_SERVERS. */
  address: string;
  /** Sets the records of one name and type (replacing what was there); TXT values longer than 255 are split into strings; MX values are `preference host`. */
  set(name: string, type: RecordType, values: string[]): void;
  /** Removes the records of one name and type. */
  remove(name: string, type: RecordType): void;
  /** How mailauth asks DNS, against this server (for `authenticate`). */
  resolve(name: string, rrtype: string): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * A real DNS server on 127.0.0.1 (UDP and TCP on the same port, so a long DKIM record that does
 * not fit a UDP answer is fetched over TCP as a resolver does) serving a zone the test edits.
 * A name with no records at all answers NXDOMAIN; a known name without the type asked, NODATA.
 */
export async function startDnsServer(): Promise<TestDnsServer> {
  const { Packet } = dns2;
  const zone = new Map<string, string[]>();
  const key = (name: string, type: string) => `${name.toLowerCase().replace(/\.$/, '')}|${type}`;
  const server = dns2.createServer({
    udp: true,
    tcp: true,
    handle(request, send) {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const name = String(question.name).toLowerCase();
      const type = Object.entries(Packet.TYPE).find(([, n]) => n === question.type)?.[0] ?? '';
      // A CNAME answers for every type, followed by its target's records (as a recursive resolver answers).
      const alias = type !== 'CNAME' ? zone.get(key(name, 'CNAME'))?.[0] : undefined;
      if (alias) response.answers.push({ name: question.name, type: Packet.TYPE.CNAME, class: Packet.CLASS.IN, ttl: 1, domain: alias } as never);
      const values = zone.get(key(alias ?? name, type)) ?? [];
      const known = [...zone.keys()].some((k) => k.startsWith(`${name}|`));
      // RFC 1035 §4.1.1: rcode 3, the name does not exist.
      if (!known) response.header.rcode = 3;
      for (const value of values) {
        if (type === 'TXT') {
          const chunks = value.match(/.{1,255}/g) ?? [''];
          response.answers.push({ name: alias ?? question.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 1, data: chunks } as never);
        } else if (type === 'MX') {
          const [priority, exchange] = value.split(/\s+/);
          response.answers.push({ name: alias ?? question.name, type: Packet.TYPE.MX, class: Packet.CLASS.IN, ttl: 1, priority: Number(priority), exchange } as never);
        } else if (type === 'CNAME') {
          response.answers.push({ name: question.name, type: Packet.TYPE.CNAME, class: Packet.CLASS.IN, ttl: 1, domain: value } as never);
        }
      }
      send(response);
    },
  });
  const { udp, tcp } = (server as unknown as { servers: { udp: { listen(port: number, address: string): void; address(): { port: number } }; tcp: { listen(port: number, address: string): void } } }).servers;
  const udpReady = new Promise((resolve) => (server as unknown as { servers: { udp: NodeJS.EventEmitter } }).servers.udp.once('listening', resolve));
  udp.listen(0, '127.0.0.1');
  await udpReady;
  const port = udp.address().port;
  tcp.listen(port, '127.0.0.1');
  await (server as unknown as { listening: Promise<unknown> }).listening;
  const { Resolver } = await import('node:dns/promises');
  const resolver = new Resolver();
  resolver.setServers([`127.0.0.1:${port}`]);
  return {
    address: `127.0.0.1:${port}`,
    set: (name, type, values) => void zone.set(key(name, type), values),
    remove: (name, type) => void zone.delete(key(name, type)),
    resolve: (name, rrtype) => resolver.resolve(name, rrtype as 'TXT'),
    close: () => server.close() as Promise<void>,
  };
}
