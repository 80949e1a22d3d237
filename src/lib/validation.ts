import { emailKey } from './email-key';
import { FieldErrors, ValidationError } from './errors';

/** `contact_type_id` → `contact type id`; a bracketed key keeps only its last part. */
export function humanName(field: string): string {
  const bracket = /\[([^\]]+)\]$/.exec(field);
  return (bracket ? bracket[1] : field).replace(/_/g, ' ');
}

export function isBlank(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value === 'string') return value.trim() === '';
  if (Array.isArray(value)) return value.length === 0 || value.every(isBlank);
  if (typeof value === 'object') return Object.keys(value as object).length === 0;
  return false;
}

export const messages = {
  required: (f: string) => `The ${humanName(f)} field is required.`,
  string: (f: string) => `The ${humanName(f)} must be a string.`,
  integer: (f: string) => `The ${humanName(f)} must be an integer.`,
  atLeast: (f: string, n: number) => `The ${humanName(f)} must be at least ${n}.`,
  between: (f: string, min: number, max: number) => `The ${humanName(f)} must be between ${min} and ${max}.`,
  numeric: (f: string) => `The ${humanName(f)} must be a number.`,
  email: (f: string) => `The ${humanName(f)} must be a valid email address.`,
  min: (f: string, n: number) => `The ${humanName(f)} must be at least ${n} characters.`,
  max: (f: string, n: number) => `The ${humanName(f)} may not be greater than ${n} characters.`,
  selected: (f: string) => `The selected ${humanName(f)} is invalid.`,
  format: (f: string) => `The ${humanName(f)} format is invalid.`,
  array: (f: string) => `The ${humanName(f)} must be an array.`,
  arrayMax: (f: string, n: number) => `The ${humanName(f)} may not have more than ${n} items.`,
  date: (f: string) => `The ${humanName(f)} is not a valid date.`,
  taken: (f: string) => `The ${humanName(f)} has already been taken.`,
  reserved: (f: string) => `The ${humanName(f)} is reserved.`,
  fileType: (f: string, ext: string) => `The ${humanName(f)} must be a file of type: ${ext}.`,
  boolean: (f: string) => `The ${humanName(f)} field must be true or false.`,
  control: (f: string) => `The ${humanName(f)} must not contain control characters.`,
  addressMax: (f: string, n: number) => `The ${humanName(f)} may not have more than ${n} addresses.`,
  /** Names the first five invalid entries so a user can find them in a long list. */
  addressInvalid: (f: string, invalid: string[]) =>
    `The ${humanName(f)} must contain valid email addresses only; invalid: ${invalid.slice(0, 5).join(', ')}` +
    (invalid.length > 5 ? ` and ${invalid.length - 5} more.` : '.'),
};

const INTEGER = /^-?\d+$/;
/** A practical address check: one @, a dotted domain, no spaces (what Laravel's `email` rule accepts in practice). */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** C0 control characters but TAB, LF and CR (which text may hold): NUL, BEL, ESC, … */
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F]/;

export function hasControlCharacters(text: string): boolean {
  return CONTROL_CHARACTERS.test(text);
}

/**
 * No control character in the local part or the domain (DEL included); also refuses an
 * address whose key (the domain in ASCII form) would not fit the 320-character columns.
 */
export function isEmail(value: string): boolean {
  return validEmailKey(value) !== undefined;
}

/** The address's key (`emailKey`) when `isEmail` accepts it, else undefined: an import checks and keys an address at once. */
export function validEmailKey(value: string): string | undefined {
  if (value.length > 320 || /[\u0000-\u001F\u007F]/.test(value) || !EMAIL.test(value)) return undefined;
  const key = emailKey(value);
  return key.length <= 320 ? key : undefined;
}

/**
 * A comma-separated address list (or an array of such strings): trimmed, blanks dropped,
 * de-duplicated by emailKey() (case and the domain's IDNA form ignored), keeping the first spelling.
 */
export function splitAddresses(value: unknown): string[] {
  const parts = (Array.isArray(value) ? value : [value]).flatMap((v) => (typeof v === 'string' ? v.split(',') : []));
  const seen = new Set<string>();
  const out: string[] = [];
  for (const part of parts) {
    const address = part.trim();
    const key = emailKey(address);
    if (address === '' || seen.has(key)) continue;
    seen.add(key);
    out.push(address);
  }
  return out;
}

/** A single value: text, a number or a boolean (not an array or object from `name[]=` or JSON). */
export function isScalar(value: unknown): value is string | number | boolean {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

/** Laravel's `boolean` rule: 1/0, true/false (as values or text). Undefined when it is none of them. */
export function toFlag(value: unknown): 0 | 1 | undefined {
  if (!isScalar(value)) return undefined;
  const text = String(value).trim().toLowerCase();
  if (text === '1' || text === 'true') return 1;
  if (text === '0' || text === 'false') return 0;
  return undefined;
}

export function isInteger(value: unknown): boolean {
  return (typeof value === 'number' && Number.isInteger(value)) || (typeof value === 'string' && INTEGER.test(value.trim()));
}

/** Merges field errors gathered by hand (for checks that need the database) and throws when any. */
export function throwIfAny(fields: FieldErrors): void {
  if (Object.keys(fields).length > 0) throw new ValidationError(fields);
}
