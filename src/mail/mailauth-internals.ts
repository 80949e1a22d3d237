// mailauth's own record readers, which its typed entry point does not export: the DKIM key
// lookup its verifier uses, and the DMARC lookup with the organisational-domain fallback of
// RFC 7489 §6.6.3. Loaded on first use (only domain checks need them). An upgrade that moves
// them breaks here and nowhere else.

/** How mailauth asks DNS: `dns.promises.resolve`'s shape (TXT answers come as arrays of strings). */
export type DnsResolve = (name: string, rrtype: string) => Promise<unknown>;

export interface DmarcRecord {
  p?: string;
  rr: string;
  isOrgRecord: boolean;
}

/** The DKIM public key published at `name`, or a thrown DNS error. */
export function getDkimPublicKey(name: string, minBitLength: number, resolver: DnsResolve): Promise<{ publicKey: string; rr: string }> {
  const tools = require('mailauth/lib/tools') as {
    getPublicKey(type: 'DKIM', name: string, minBitLength: number, resolver: DnsResolve): Promise<{ publicKey: string; rr: string }>;
  };
  return tools.getPublicKey('DKIM', name, minBitLength, resolver);
}

/** The DMARC record that governs `domain` (its own or its organisational domain's), false when none. */
export function getDmarcRecord(domain: string, resolver: DnsResolve): Promise<false | DmarcRecord> {
  const lookup = require('mailauth/lib/dmarc/get-dmarc-record') as (domain: string, resolver: DnsResolve) => Promise<false | DmarcRecord>;
  return lookup(domain, resolver);
}
