import crypto from 'node:crypto';
import { emailKey } from '../lib/email-key';

/** A key that signs a message: `d=domain`, `s=selector`. */
export interface DkimKey {
  domain: string;
  selector: string;
  /** PEM. */
  privateKey: string;
}

/** A new RSA 2048 key pair: the public key as the `p=` of its DNS record (base64 DER), the private key PEM. */
export function generateDkimKeyPair(): Promise<{ publicKey: string; privateKey: string }> {
  return new Promise((resolve, reject) => {
    crypto.generateKeyPair(
      'rsa',
      { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'der' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } },
      (err, publicKey, privateKey) => (err ? reject(err) : resolve({ publicKey: publicKey.toString('base64'), privateKey })),
    );
  });
}

/** The TXT record that publishes a public key (RFC 6376 §3.6.1). */
export function dkimRecordValue(publicKey: string): string {
  return `v=DKIM1; k=rsa; p=${publicKey}`;
}

/** A selector of our choosing: dated, so a new key later gets a new name beside the old one. */
export function newSelector(now: Date): string {
  return `cm${now.toISOString().slice(0, 7).replace('-', '')}`;
}

/**
 * The domain whose key signs mail from `address`: the longest of `domains` that is its
 * domain or a parent of it (mail from news.example.com is signed by example.com).
 */
export function signingDomainOf(address: string, domains: Iterable<string>): string | undefined {
  const key = emailKey(address);
  const host = key.slice(key.lastIndexOf('@') + 1);
  let best: string | undefined;
  for (const domain of domains) {
    if ((host === domain || host.endsWith(`.${domain}`)) && (!best || domain.length > best.length)) best = domain;
  }
  return best;
}

/** The address of a From value (a string may be `Name <address>`). */
export function fromAddress(from: string | { address: string }): string {
  if (typeof from !== 'string') return from.address;
  return /<([^>]+)>\s*$/.exec(from)?.[1] ?? from;
}
