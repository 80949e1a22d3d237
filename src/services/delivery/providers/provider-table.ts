/**
 * The mailbox providers the sending tells apart, by the MX hosts of a recipient's domain: one
 * declaration, read by the classification, the figures, the backoff and the reports. A host
 * matches a suffix when it is that name or ends in `.` + it. Anything else is `other`, and so is
 * a domain without MX (or not found) until it resolves.
 */
export const PROVIDER_TABLE = [
  { provider: 'google', label: 'Gmail', mx: ['google.com', 'googlemail.com'] },
  { provider: 'microsoft', label: 'Outlook', mx: ['outlook.com', 'protection.outlook.com', 'hotmail.com'] },
  { provider: 'yahoo', label: 'Yahoo', mx: ['yahoodns.net'] },
  { provider: 'apple', label: 'iCloud', mx: ['icloud.com', 'me.com'] },
  { provider: 'proton', label: 'Proton', mx: ['protonmail.ch'] },
  { provider: 'zoho', label: 'Zoho', mx: ['zoho.com', 'zoho.eu'] },
  { provider: 'amazon', label: 'Amazon', mx: ['amazonaws.com'] },
] as const;

export const PROVIDERS = [...PROVIDER_TABLE.map((p) => p.provider), 'other'] as const;
export type Provider = (typeof PROVIDERS)[number];

/** The provider's name for people ("Gmail is deferring…"). */
export function providerLabel(provider: string): string {
  return PROVIDER_TABLE.find((p) => p.provider === provider)?.label ?? 'Other providers';
}

/** The provider whose MX suffix the first matching host (lowest preference first) ends in. */
export function providerOfMx(hosts: string[]): Provider {
  for (const host of hosts) {
    const name = host.toLowerCase().replace(/\.$/, '');
    const found = PROVIDER_TABLE.find((p) => p.mx.some((suffix) => name === suffix || name.endsWith(`.${suffix}`)));
    if (found) return found.provider;
  }
  return 'other';
}

export function isProvider(value: unknown): value is Provider {
  return typeof value === 'string' && (PROVIDERS as readonly string[]).includes(value);
}
