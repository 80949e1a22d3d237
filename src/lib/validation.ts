import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { body, query, ValidationChain, validationResult } from 'express-validator';
import { LIMITS } from './constants';
import { FieldErrors, ValidationError } from './errors';

/**
 * express-validator chains that speak the reference's Laravel-style sentences:
 * `The <name with spaces> field is required.`, `The email must be a valid email address.`, …
 * Build them with `field('name').required().minLength(2)` and run them with `validate(...)`,
 * which reports every failing field at once as a 422.
 */

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
  addressMax: (f: string, n: number) => `The ${humanName(f)} may not have more than ${n} addresses.`,
  /** Names the first five invalid entries so a user can find them in a long list. */
  addressInvalid: (f: string, invalid: string[]) =>
    `The ${humanName(f)} must contain valid email addresses only; invalid: ${invalid.slice(0, 5).join(', ')}` +
    (invalid.length > 5 ? ` and ${invalid.length - 5} more.` : '.'),
};

const INTEGER = /^-?\d+$/;
/** A practical address check: one @, a dotted domain, no spaces (what Laravel's `email` rule accepts in practice). */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function isEmail(value: string): boolean {
  return value.length <= 320 && EMAIL.test(value);
}

/**
 * A comma-separated address list (or an array of such strings): trimmed, blanks dropped,
 * de-duplicated case-insensitively keeping the first spelling.
 */
export function splitAddresses(value: unknown): string[] {
  const parts = (Array.isArray(value) ? value : [value]).flatMap((v) => (typeof v === 'string' ? v.split(',') : []));
  const seen = new Set<string>();
  const out: string[] = [];
  for (const part of parts) {
    const address = part.trim();
    const key = address.toLowerCase();
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

export class Rule {
  constructor(
    readonly name: string,
    readonly chain: ValidationChain,
  ) {}

  /** Missing means undefined, null, blank text or an empty array. Stops this field's other checks. */
  required(message = messages.required(this.name)): this {
    this.chain.custom((value) => !isBlank(value)).withMessage(message).bail();
    return this;
  }

  /** Skips the remaining checks when the value is absent or blank. */
  optional(): this {
    this.chain.optional({ values: 'falsy' });
    return this;
  }

  string(): this {
    this.chain.custom((v) => typeof v === 'string' || typeof v === 'number').withMessage(messages.string(this.name)).bail();
    return this;
  }

  integer(min?: number): this {
    this.chain.custom((v) => isInteger(v)).withMessage(messages.integer(this.name)).bail();
    if (min !== undefined) this.chain.custom((v) => Number(v) >= min).withMessage(messages.atLeast(this.name, min)).bail();
    return this;
  }

  numeric(): this {
    this.chain.custom((v) => String(v).trim() !== '' && Number.isFinite(Number(v))).withMessage(messages.numeric(this.name)).bail();
    return this;
  }

  email(): this {
    this.chain.custom((v) => typeof v === 'string' && isEmail(v.trim())).withMessage(messages.email(this.name)).bail();
    return this;
  }

  minLength(n: number): this {
    this.chain.custom((v) => String(v).trim().length >= n).withMessage(messages.min(this.name, n)).bail();
    return this;
  }

  maxLength(n: number): this {
    this.chain.custom((v) => String(v).length <= n).withMessage(messages.max(this.name, n)).bail();
    return this;
  }

  oneOf(values: readonly (string | number)[]): this {
    const allowed = new Set(values.map(String));
    this.chain.custom((v) => isScalar(v) && allowed.has(String(v).trim())).withMessage(messages.selected(this.name)).bail();
    return this;
  }

  matches(pattern: RegExp, message = messages.format(this.name)): this {
    this.chain.custom((v) => typeof v === 'string' && pattern.test(v)).withMessage(message).bail();
    return this;
  }

  /** 0 or 1 (also true/false); read it with toFlag(). */
  boolean(): this {
    this.chain.custom((v) => toFlag(v) !== undefined).withMessage(messages.boolean(this.name)).bail();
    return this;
  }

  /**
   * A comma-separated address list, read with splitAddresses(): at least one address,
   * at most `max`, every one valid (the message names the first invalid ones).
   */
  addressList(max: number = LIMITS.addressList): this {
    const name = this.name;
    this.chain
      .custom((v) => typeof v === 'string' || (Array.isArray(v) && v.every((e) => typeof e === 'string')))
      .withMessage(messages.string(name))
      .bail()
      .custom((v) => splitAddresses(v).length > 0)
      .withMessage(messages.required(name))
      .bail()
      .custom((v) => splitAddresses(v).length <= max)
      .withMessage(messages.addressMax(name, max))
      .bail()
      .custom((v) => {
        const invalid = splitAddresses(v).filter((address) => !isEmail(address));
        if (invalid.length > 0) throw new Error(messages.addressInvalid(name, invalid));
        return true;
      })
      .bail();
    return this;
  }

  /** An array (indexed, bracketed or JSON) of at most `max` entries. */
  array(max?: number): this {
    this.chain.custom((v) => Array.isArray(v)).withMessage(messages.array(this.name)).bail();
    if (max !== undefined) {
      this.chain.custom((v: unknown[]) => v.length <= max).withMessage(messages.arrayMax(this.name, max)).bail();
    }
    return this;
  }

  /** Any custom check with its own message. */
  check(test: (value: unknown) => boolean, message: string): this {
    this.chain.custom((v) => test(v)).withMessage(message).bail();
    return this;
  }
}

export function field(name: string, location: 'body' | 'query' = 'body'): Rule {
  return new Rule(name, (location === 'body' ? body : query)(name));
}

/**
 * Runs every rule, then throws one ValidationError with every failing field, listed in the
 * order the rules are given (the chains finish in any order; clients and tests see one).
 */
export function validate(...rules: Rule[]): RequestHandler {
  return async (req: Request, _res: Response, next: NextFunction) => {
    await Promise.all(rules.map((rule) => rule.chain.run(req)));
    const result = validationResult(req);
    if (!result.isEmpty()) {
      const found: FieldErrors = {};
      for (const error of result.array()) {
        if (error.type !== 'field') continue;
        const messagesOfField = (found[error.path] ??= []);
        if (!messagesOfField.includes(String(error.msg))) messagesOfField.push(String(error.msg));
      }
      const fields: FieldErrors = {};
      for (const name of [...rules.map((rule) => rule.name), ...Object.keys(found)]) {
        if (found[name] && !fields[name]) fields[name] = found[name];
      }
      throw new ValidationError(fields);
    }
    next();
  };
}

/** Merges field errors gathered by hand (for checks that need the database) and throws when any. */
export function throwIfAny(fields: FieldErrors): void {
  if (Object.keys(fields).length > 0) throw new ValidationError(fields);
}
