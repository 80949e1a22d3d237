import { FULL_NAME_PLACEHOLDER, RESERVED_FIELD_NAMES, SENDER_PLACEHOLDERS, SenderPlaceholder } from '../lib/constants';

/** Values of a recipient by placeholder name: contact columns, custom fields, then the sender's. */
export type PersonalValues = Record<string, string | undefined>;

/** The sender's placeholders (its name and postal address) of one send. */
export type SenderValues = Record<SenderPlaceholder, string>;

function text(value: unknown): string {
  if (value === null || value === undefined) return '';
  return value instanceof Date ? value.toISOString() : String(value);
}

/**
 * A contact row (or a segment recipient stored by hand) and its custom fields (already read from
 * their JSON column) as placeholder values. `country` is a country id on contacts and is shown by name.
 */
export function personalValues(
  person: Record<string, unknown>,
  custom: Record<string, unknown> | null,
  countryName: (id: number) => string | undefined,
  sender: SenderValues,
): PersonalValues {
  const values: PersonalValues = {};
  if (custom && typeof custom === 'object') {
    for (const [name, value] of Object.entries(custom)) values[name] = text(value);
  }
  for (const name of RESERVED_FIELD_NAMES) values[name] = text(person[name]);
  const country = person.country;
  if (typeof country === 'number' || (typeof country === 'string' && /^\d+$/.test(country))) {
    values.country = countryName(Number(country)) ?? '';
  }
  if (!values[FULL_NAME_PLACEHOLDER]) values[FULL_NAME_PLACEHOLDER] = [values.first_name, values.last_name].filter(Boolean).join(' ');
  for (const name of SENDER_PLACEHOLDERS) values[name] = sender[name];
  return values;
}
