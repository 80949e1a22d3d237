/**
 * What a CSV column of an import can mean: the one table of header aliases (docs/import-export.md,
 * "Columns"), the special targets beside the contact's own fields, and the status
 * words that put an address on the global unsubscribe list.
 */

/** Targets beyond the contact columns and custom fields (explicit mappings may name them too). */
export const SPECIAL_TARGETS = {
  /** One name, split: the first word is the first name, the rest the last name. */
  full_name: 'Full name (split into first and last name)',
  /** A status word (listmonk `status`, Mailchimp `STATUS`): see UNSUBSCRIBED_STATUSES. */
  status: 'Status (unsubscribed, unconfirmed, junk, cleaned, bounced, blocklisted)',
  /** Any value other than empty, 0, false or no marks the address unsubscribed (UNSUB_TIME, blacklist flags). */
  unsubscribed: 'Unsubscribed when filled in',
  /** The same for an address the other tool removed as undeliverable (Mailchimp's CLEAN_TIME): suppressed as a bounce. */
  cleaned: 'Bounced (cleaned) when filled in',
  /** listmonk's JSON object: its keys fill the custom fields of the same name. */
  attributes: 'Attributes (JSON, keys fill custom fields)',
  /** The contact's IANA time zone (Mailchimp's `TIMEZONE`); a zone nobody knows skips the row. */
  time_zone: 'Time zone (such as Europe/Paris)',
} as const;
export type SpecialTarget = keyof typeof SPECIAL_TARGETS;

/** The mapping value that leaves a column out. */
export const IGNORE = 'ignore';

/**
 * Status words of exports that mean "do not mail this address" (compared case-insensitively).
 * MailerLite's `junk` (a complaint) and `unconfirmed` (double opt-in never confirmed) go on the
 * global unsubscribe list too: an unconfirmed address leaves it when it confirms through a
 * signup form. (Mailchimp's `pending` stays mailable, as it always has here.)
 */
export const UNSUBSCRIBED_STATUSES: readonly string[] = ['unsubscribed', 'cleaned', 'bounced', 'blocklisted', 'blacklisted', 'junk', 'unconfirmed'];
/** Those of them that mean the address does not take mail: it goes on the suppression list as a bounce, not on the unsubscribe list. */
export const BOUNCED_STATUSES: readonly string[] = ['cleaned', 'bounced'];

export function isBouncedStatus(value: string): boolean {
  return BOUNCED_STATUSES.includes(value.trim().toLowerCase());
}

/** Values of an "unsubscribed when filled in" column that do not mark it. */
const FALSE_WORDS = new Set(['', '0', 'false', 'no', 'n', 'off']);

export function isUnsubscribedStatus(value: string): boolean {
  return UNSUBSCRIBED_STATUSES.includes(value.trim().toLowerCase());
}

export function isFilledFlag(value: string): boolean {
  return !FALSE_WORDS.has(value.trim().toLowerCase());
}

/**
 * A header as the alias table compares it: lower case, letters and digits only
 * (`E-mail 1 - Value` → `email1value`, `State/Region` → `stateregion`).
 */
export function aliasKey(header: string): string {
  return header.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
}

/**
 * The alias table: target → the headers of the exports people bring (written as they appear;
 * compared through aliasKey). The reserved field names themselves always match too. Where a
 * file has two columns for one target (Outlook's home and business city), the first wins.
 */
export const HEADER_ALIASES: Readonly<Record<string, readonly string[]>> = {
  email: [
    'Email', 'E-mail', 'Email Address', 'E-mail Address', 'E-mail 1 - Value', 'EMAIL', 'Mail', 'Email address (primary)', 'Primary Email',
    'Subscriber',
  ],
  alt_email: ['Alt Email', 'E-mail 2 - Value', 'E-mail 2 Address', 'Secondary Email', 'Alternate Email', 'Alternative Email', 'Other Email'],
  first_name: ['First Name', 'FIRSTNAME', 'FNAME', 'Given Name', 'First', 'Forename', 'PRENOM', 'Prénom', 'VORNAME', 'NOMBRE'],
  last_name: ['Last Name', 'LASTNAME', 'LNAME', 'Surname', 'Family Name', 'Last', 'NOM', 'NACHNAME', 'APELLIDOS', 'Apellido'],
  full_name: ['Name', 'Full Name', 'Display Name', 'Contact Name'],
  address_line1: ['Address', 'Address Line 1', 'Street', 'Street Address', 'Home Street', 'Business Street', 'Address 1 - Street', 'Address 1', 'ADDRESS'],
  address_line2: ['Address Line 2', 'Street 2', 'Home Street 2', 'Business Street 2', 'Address 1 - Extended Address', 'Address 2'],
  city: ['City', 'Town', 'Home City', 'Business City', 'Address 1 - City'],
  state: ['State', 'State/Region', 'Home State', 'Business State', 'Address 1 - Region'],
  state_province_region: ['State Province Region', 'Province', 'State/Province', 'Region/State'],
  postal_code: ['Postal Code', 'Zip', 'ZIP code', 'Zip/Postal Code', 'Postcode', 'Post Code', 'Home Postal Code', 'Business Postal Code', 'Address 1 - Postal Code', 'PLZ', 'z_i_p'],
  country: ['Country', 'Country/Region', 'Home Country/Region', 'Business Country/Region', 'Home Country', 'Address 1 - Country', 'Country Code'],
  status: ['Status', 'STATUS', 'Subscription Status', 'Email Status'],
  cleaned: ['CLEAN_TIME', 'Cleaned', 'Bounced'],
  unsubscribed: [
    'UNSUB_TIME', 'Blacklisted', 'EMAIL_BLACKLISTED', 'Email Blacklisted', 'Blocklisted', 'Email Blocklisted',
    'Unsubscribed from all email', 'Unsubscribed', 'Opted Out', 'Email Opt Out', 'email_disabled',
  ],
  attributes: ['attributes', 'attribs'],
  time_zone: ['Time Zone', 'TIMEZONE', 'TZ', 'Time zone (IANA)'],
};

let lookup: Map<string, string> | undefined;

/** The target an alias names (a reserved field, or one of SPECIAL_TARGETS), if any. */
export function aliasTarget(header: string, reserved: readonly string[]): string | undefined {
  if (!lookup) {
    lookup = new Map();
    for (const [target, headers] of Object.entries(HEADER_ALIASES)) for (const h of headers) lookup.set(aliasKey(h), target);
  }
  const key = aliasKey(header);
  const byName = reserved.find((name) => aliasKey(name) === key);
  return byName ?? lookup.get(key);
}

/** The separator of several values in one cell of a Google Contacts export (`a@x.org ::: b@y.org`). */
export const SEVERAL_VALUES = ':::';

/** The first of several values of a Google Contacts cell, and whether there were several. */
export function firstOfSeveral(cell: string): [string, boolean] {
  const at = cell.indexOf(SEVERAL_VALUES);
  return at < 0 ? [cell, false] : [cell.slice(0, at).trim(), true];
}

/** First and last name from one name: the first word, then the rest. */
export function splitFullName(name: string): [string, string] {
  const trimmed = name.trim().replace(/\s+/g, ' ');
  const space = trimmed.indexOf(' ');
  return space < 0 ? [trimmed, ''] : [trimmed.slice(0, space), trimmed.slice(space + 1)];
}
