import crypto from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { DomainRecordPurpose, DomainRecordStatus, RETURN_PATH_LABEL } from '../lib/constants';
import { dkimRecordValue } from './dkim';
import { DmarcRecord, DnsResolve, getDkimPublicKey, getDmarcRecord } from './mailauth-internals';

export type { DnsResolve };

/** One DNS record a sending domain needs, and what the last check found there. */
export interface DomainRecord {
  purpose: DomainRecordPurpose;
  type: 'TXT' | 'CNAME';
  host: string;
  value: string;
  status: DomainRecordStatus;
  /** What DNS answered at `host` (the relevant record), or null when nothing. */
  found: string | null;
}

/** DNS did not answer (timeout, SERVFAIL, refused): nothing can be said about the records. */
export class DnsUnavailableError extends Error {}

/** Answers that mean "no such record", as opposed to DNS not answering. */
const ABSENT = new Set(['ENOTFOUND', 'ENODATA']);
const isAbsent = (err: unknown) => ABSENT.has(String((err as { code?: unknown })?.code));

/**
 * The lookup every check uses: DNS_SERVERS (`ip[:port]`) when given, else the system's resolver.
 * A lookup that gets no answer (timeout, SERVFAIL) throws DnsUnavailableError.
 */
export function createDnsResolve(servers: string[]): DnsResolve {
  const resolver = new Resolver({ timeout: 3000, tries: 2 });
  if (servers.length) resolver.setServers(servers);
  return async (name, rrtype) => {
    try {
      return await resolver.resolve(name, rrtype as 'TXT');
    } catch (err) {
      if (isAbsent(err)) throw err;
      throw new DnsUnavailableError(`DNS did not answer for ${name} (${String((err as { code?: unknown }).code ?? err)})`);
    }
  };
}

export interface DomainKeys {
  domain: string;
  selector: string;
  /** Base64 DER of the public key. */
  publicKey: string;
}

export interface RecordOptions {
  /** SPF_INCLUDE: what the SPF record must include. */
  spfInclude?: string;
  /** BOUNCE_DOMAIN: where the return-path record must point. */
  bounceDomain?: string;
}

/** The records a domain needs, as a customer would publish them, all still unchecked (`missing`). */
export function expectedRecords(keys: DomainKeys, options: RecordOptions): DomainRecord[] {
  const records: DomainRecord[] = [
    { purpose: 'dkim', type: 'TXT', host: `${keys.selector}._domainkey.${keys.domain}`, value: dkimRecordValue(keys.publicKey), status: 'missing', found: null },
    { purpose: 'spf', type: 'TXT', host: keys.domain, value: options.spfInclude ? `v=spf1 include:${options.spfInclude} ~all` : 'v=spf1 mx ~all', status: 'missing', found: null },
    { purpose: 'dmarc', type: 'TXT', host: `_dmarc.${keys.domain}`, value: `v=DMARC1; p=none; adkim=r; aspf=r`, status: 'missing', found: null },
  ];
  if (options.bounceDomain) {
    records.push({ purpose: 'return_path', type: 'CNAME', host: `${RETURN_PATH_LABEL}.${keys.domain}`, value: options.bounceDomain, status: 'missing', found: null });
  }
  return records;
}

/** Whether a checked domain may sign: its DKIM key is published as ours and a DMARC record applies. */
export function isAuthenticated(records: DomainRecord[]): boolean {
  const ok = (purpose: DomainRecordPurpose) => records.some((r) => r.purpose === purpose && r.status === 'ok');
  return ok('dkim') && ok('dmarc');
}

/** Looks every record of a domain up now; throws DnsUnavailableError when DNS does not answer. */
export async function checkRecords(keys: DomainKeys, options: RecordOptions, resolve: DnsResolve): Promise<DomainRecord[]> {
  const records = expectedRecords(keys, options);
  for (const record of records) Object.assign(record, await CHECKS[record.purpose](record, keys, options, resolve));
  return records;
}

type Found = Pick<DomainRecord, 'status' | 'found'>;
type Check = (record: DomainRecord, keys: DomainKeys, options: RecordOptions, resolve: DnsResolve) => Promise<Found>;

const rethrowUnavailable = (err: unknown) => {
  if (err instanceof DnsUnavailableError) throw err;
};

/** The key at the selector, read by mailauth as a verifier reads it, must be ours. */
const checkDkim: Check = async (record, keys, _options, resolve) => {
  const txt = await txtRecords(record.host, resolve);
  const found = txt.length ? txt.join(' ') : null;
  if (!found) return { status: 'missing', found };
  try {
    const published = await getDkimPublicKey(record.host, 1024, resolve);
    const der = crypto.createPublicKey(published.publicKey).export({ type: 'spki', format: 'der' }).toString('base64');
    return { status: der === keys.publicKey ? 'ok' : 'wrong', found };
  } catch (err) {
    rethrowUnavailable(err);
    return { status: 'wrong', found };
  }
};

/** One `v=spf1` record (two are a permanent error, RFC 7208 §4.5), including SPF_INCLUDE when set. */
const checkSpf: Check = async (record, _keys, options, resolve) => {
  const spf = (await txtRecords(record.host, resolve)).filter((t) => /^v=spf1(\s|$)/i.test(t));
  if (!spf.length) return { status: 'missing', found: null };
  const found = spf.join(' | ');
  if (spf.length > 1) return { status: 'wrong', found };
  if (!options.spfInclude) return { status: 'ok', found };
  const terms = spf[0].toLowerCase().split(/\s+/);
  const wanted = options.spfInclude.toLowerCase();
  const included = terms.some((t) => t.replace(/^[+?~-]/, '') === `include:${wanted}` || t === `redirect=${wanted}`);
  return { status: included ? 'ok' : 'wrong', found };
};

/** A DMARC record (the domain's or its organisational domain's) with a policy of at least `none`. */
const checkDmarc: Check = async (_record, keys, _options, resolve) => {
  let dmarc: false | DmarcRecord;
  try {
    dmarc = await getDmarcRecord(keys.domain, resolve);
  } catch (err) {
    rethrowUnavailable(err);
    dmarc = false;
  }
  if (!dmarc) return { status: 'missing', found: null };
  const policy = String(dmarc.p ?? '').trim().toLowerCase();
  return { status: ['none', 'quarantine', 'reject'].includes(policy) ? 'ok' : 'wrong', found: dmarc.rr };
};

/** The bounce subdomain is a CNAME to BOUNCE_DOMAIN. */
const checkReturnPath: Check = async (record, _keys, _options, resolve) => {
  let names: string[];
  try {
    names = (await resolve(record.host, 'CNAME')) as string[];
  } catch (err) {
    rethrowUnavailable(err);
    names = [];
  }
  if (!names.length) return { status: 'missing', found: null };
  const target = names[0].replace(/\.$/, '').toLowerCase();
  return { status: target === record.value.toLowerCase() ? 'ok' : 'wrong', found: target };
};

const CHECKS: Record<DomainRecordPurpose, Check> = { dkim: checkDkim, spf: checkSpf, dmarc: checkDmarc, return_path: checkReturnPath };

/** The TXT records at a name, each joined from its strings; none when the name has none. */
async function txtRecords(name: string, resolve: DnsResolve): Promise<string[]> {
  try {
    return ((await resolve(name, 'TXT')) as string[][]).map((parts) => parts.join(''));
  } catch (err) {
    rethrowUnavailable(err);
    return [];
  }
}

/** The MX hosts of a domain, lowest preference first; none when it has no MX or does not exist. Throws DnsUnavailableError. */
export type MxLookup = (domain: string) => Promise<string[]>;

export function createMxLookup(servers: string[]): MxLookup {
  const resolve = createDnsResolve(servers);
  return async (domain) => {
    try {
      const records = (await resolve(domain, 'MX')) as Array<{ exchange: string; priority: number }>;
      return [...records].sort((a, b) => a.priority - b.priority).map((r) => r.exchange.toLowerCase());
    } catch (err) {
      if (isAbsent(err)) return [];
      throw err;
    }
  };
}
