import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { body, query, ValidationChain, validationResult } from 'express-validator';
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
  fileType: (f: string, ext: string) => `The ${humanName(f)} must be a file of type: ${ext}.`,
};

const INTEGER = /^-?\d+$/;
/** A practical address check: one @, a dotted domain, no spaces (what Laravel's `email` rule accepts in practice). */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function isEmail(value: string): boolean {
  return value.length <= 320 && EMAIL.test(value);
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
    this.chain
      .custom((v) => isInteger(v) && (min === undefined || Number(v) >= min))
      .withMessage(messages.integer(this.name))
      .bail();
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
    this.chain.custom((v) => allowed.has(String(v).trim())).withMessage(messages.selected(this.name)).bail();
    return this;
  }

  matches(pattern: RegExp, message = messages.format(this.name)): this {
    this.chain.custom((v) => typeof v === 'string' && pattern.test(v)).withMessage(message).bail();
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

/** Runs every rule, then throws one ValidationError with every failing field. */
export function validate(...rules: Rule[]): RequestHandler {
  return async (req: Request, _res: Response, next: NextFunction) => {
    await Promise.all(rules.map((rule) => rule.chain.run(req)));
    const result = validationResult(req);
    if (!result.isEmpty()) {
      const fields: FieldErrors = {};
      for (const error of result.array()) {
        if (error.type !== 'field') continue;
        const messagesOfField = (fields[error.path] ??= []);
        if (!messagesOfField.includes(String(error.msg))) messagesOfField.push(String(error.msg));
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
