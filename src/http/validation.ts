import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { body, CustomValidator, query, ValidationChain, validationResult } from 'express-validator';
import { LIMITS } from '../lib/constants';
import { FieldErrors, ValidationError } from '../lib/errors';
import { hasControlCharacters, isBlank, isEmail, isInteger, isScalar, messages, splitAddresses, toFlag } from '../lib/validation';
import type { JsonSchema, ParamDoc, ParamLocation } from './param-doc';

/**
 * express-validator chains that speak the reference's Laravel-style sentences:
 * `The <name with spaces> field is required.`, `The email must be a valid email address.`, …
 * Build them with `field('name').required().minLength(2)` and run them with `validate(...)`,
 * which reports every failing field at once as a 422.
 *
 * Each check also writes what it accepts into `doc` (required, type, format, limits, enum):
 * the OpenAPI document describes a route's parameters from the very rules that validate them.
 */

export class Rule {
  /** What the OpenAPI document says of this parameter, built by the checks below. */
  readonly doc: ParamDoc;
  /** The checks, in order, applied to the express-validator chain when it is first needed. */
  private readonly steps: ((chain: ValidationChain) => unknown)[] = [];
  private built?: ValidationChain;
  /** Takes a list (array(), addressList()), so is not refused for being one. */
  private list = false;

  /** Every field starts with the one check all text gets: no control characters (TAB, CR, LF aside). */
  constructor(
    readonly name: string,
    private readonly location: 'body' | 'query' = 'body',
  ) {
    this.doc = { name, in: location, required: false, schema: {} };
    this.custom((v) => !containsControlCharacters(v), messages.control(name));
  }

  /**
   * The express-validator chain, built on the first request that runs it: a chain binds some
   * ninety methods to itself, and the service declares hundreds of fields, so building them
   * all at start cost megabytes of memory and milliseconds for routes that may never be called.
   */
  get chain(): ValidationChain {
    if (!this.built) {
      const chain = (this.location === 'body' ? body : query)(this.name);
      // After the control-character check, before the others: a value that should be one text
      // or number but is an object or array (`name[a]=1`, `{"name": {}}`) fails as what it is.
      const message = this.list ? undefined : scalarMessage(this.name, this.doc.schema);
      const steps = message === undefined ? this.steps : [this.steps[0], (c: ValidationChain) => c.custom(isScalarOrBlank).withMessage(message).bail(), ...this.steps.slice(1)];
      for (const step of steps) step(chain);
      this.built = chain;
    }
    return this.built;
  }

  /**
   * A check of the value (with the request at hand), failing with `message` (or with the
   * message of what it throws) and, unless `bail` is false, stopping this field's other checks.
   */
  custom(test: CustomValidator, message?: string, { bail = true } = {}): this {
    if (this.built) throw new Error(`field ${this.name}: checks must be declared before the first request`);
    this.steps.push((chain) => {
      const checked = message === undefined ? chain.custom(test) : chain.custom(test).withMessage(message);
      if (bail) checked.bail();
    });
    return this;
  }

  /** Adds to the parameter's description in the OpenAPI document (for checks written with check()). */
  describe(schema: JsonSchema, description?: string): this {
    Object.assign(this.doc.schema, schema);
    if (description) this.doc.description = this.doc.description ? `${this.doc.description} ${description}` : description;
    return this;
  }

  /** Missing means undefined, null, blank text or an empty array. Stops this field's other checks. */
  required(message = messages.required(this.name)): this {
    this.doc.required = true;
    this.custom((value) => !isBlank(value), message);
    return this;
  }

  /** Skips the remaining checks when the value is absent or blank. */
  optional(): this {
    this.steps.push((chain) => chain.optional({ values: 'falsy' }));
    return this;
  }

  string(): this {
    this.describe({ type: 'string' });
    this.custom((v) => typeof v === 'string' || typeof v === 'number', messages.string(this.name));
    return this;
  }

  integer(min?: number): this {
    this.describe({ type: 'integer', ...(min !== undefined ? { minimum: min } : {}) });
    this.custom((v) => isInteger(v), messages.integer(this.name));
    if (min !== undefined) this.custom((v) => Number(v) >= min, messages.atLeast(this.name, min));
    return this;
  }

  numeric(): this {
    this.describe({ type: 'number' });
    this.custom((v) => String(v).trim() !== '' && Number.isFinite(Number(v)), messages.numeric(this.name));
    return this;
  }

  email(): this {
    this.describe({ type: 'string', format: 'email' });
    this.custom((v) => typeof v === 'string' && isEmail(v.trim()), messages.email(this.name));
    return this;
  }

  minLength(n: number): this {
    this.describe({ minLength: n });
    this.custom((v) => String(v).trim().length >= n, messages.min(this.name, n));
    return this;
  }

  maxLength(n: number): this {
    this.describe({ maxLength: n });
    this.custom((v) => String(v).length <= n, messages.max(this.name, n));
    return this;
  }

  oneOf(values: readonly (string | number)[]): this {
    this.describe({ ...(values.every((v) => typeof v === 'string') ? { type: 'string' } : {}), enum: [...values] });
    const allowed = new Set(values.map(String));
    this.custom((v) => isScalar(v) && allowed.has(String(v).trim()), messages.selected(this.name));
    return this;
  }

  matches(pattern: RegExp, message = messages.format(this.name)): this {
    this.describe({ type: 'string', pattern: pattern.source });
    this.custom((v) => typeof v === 'string' && pattern.test(v), message);
    return this;
  }

  /** 0 or 1 (also true/false); read it with toFlag(). */
  boolean(): this {
    this.describe({ type: 'integer', enum: [0, 1] }, '0 or 1 (true and false are accepted too).');
    this.custom((v) => toFlag(v) !== undefined, messages.boolean(this.name));
    return this;
  }

  /**
   * A comma-separated address list, read with splitAddresses(): at least one address,
   * at most `max`, every one valid (the message names the first invalid ones).
   */
  addressList(max: number = LIMITS.addressList): this {
    const name = this.name;
    this.list = true;
    this.describe({ type: 'string' }, `Email addresses separated by commas (at most ${max}); an array of addresses is accepted too.`);
    this.custom((v) => typeof v === 'string' || (Array.isArray(v) && v.every((e) => typeof e === 'string')), messages.string(name));
    this.custom((v) => splitAddresses(v).length > 0, messages.required(name));
    this.custom((v) => splitAddresses(v).length <= max, messages.addressMax(name, max));
    this.custom((v) => {
      const invalid = splitAddresses(v).filter((address) => !isEmail(address));
      if (invalid.length > 0) throw new Error(messages.addressInvalid(name, invalid));
      return true;
    });
    return this;
  }

  /**
   * An array (indexed, bracketed or JSON) of at most `max` entries, described as holding
   * `items` (a generated client types the array from it; its entries are the caller's check).
   */
  array(items: JsonSchema, max?: number): this {
    this.list = true;
    this.describe({ type: 'array', items, ...(max !== undefined ? { maxItems: max } : {}) });
    this.custom((v) => Array.isArray(v), messages.array(this.name));
    if (max !== undefined) {
      this.custom((v: unknown[]) => v.length <= max, messages.arrayMax(this.name, max));
    }
    return this;
  }

  /** Any custom check with its own message. */
  check(test: (value: unknown) => boolean, message: string): this {
    this.custom((v) => test(v), message);
    return this;
  }
}

const isScalarOrBlank = (value: unknown) => isBlank(value) || isScalar(value);

/** What a parameter described by `schema` must be when it is one value, said as its message; undefined for arrays, objects and undescribed values. */
function scalarMessage(name: string, schema: JsonSchema): string | undefined {
  const enumerated = schema.enum as unknown[] | undefined;
  if (schema.type === 'integer' && enumerated?.length === 2 && enumerated.includes(0) && enumerated.includes(1)) return messages.boolean(name);
  if (enumerated) return messages.selected(name);
  switch (schema.type) {
    case 'string':
      return messages.string(name);
    case 'integer':
      return messages.integer(name);
    case 'number':
      return messages.numeric(name);
    case 'boolean':
      return messages.boolean(name);
  }
  return undefined;
}

/**
 * The shape problems of parameters read without a rule (a route's `params`, e.g. a segment's
 * conditions): a parameter described as one value must not be an object or array, and an
 * array of values must hold values (by index: `select_field[0][a]=x` is `select_field.0`).
 * Parsers make objects of nested keys in every encoding (`a[b]=1` in urlencoded and multipart
 * fields, objects in JSON); a service reading them as text must never meet one.
 */
export function shapeErrors(params: readonly ParamDoc[], req: Request): FieldErrors {
  const errors: FieldErrors = {};
  for (const p of params) {
    const source = (p.in === 'query' || (p.in === 'either' && req.method !== 'POST') ? req.query : req.body) as Record<string, unknown> | undefined;
    const value = source?.[p.name];
    if (isBlank(value) || isScalar(value)) continue;
    const single = scalarMessage(p.name, p.schema);
    if (single !== undefined) {
      errors[p.name] = [single];
      continue;
    }
    const items = p.schema.type === 'array' ? (p.schema.items as JsonSchema | undefined) : undefined;
    if (!items) continue;
    const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value as object);
    if (entries.some(([key]) => !/^\d+$/.test(key))) {
      errors[p.name] = [messages.array(p.name)];
      continue;
    }
    for (const [key, entry] of entries) {
      const itemMessage = scalarMessage(`${p.name}.${key}`, items);
      if (itemMessage !== undefined && !isScalarOrBlank(entry)) errors[`${p.name}.${key}`] ??= [itemMessage];
    }
  }
  return errors;
}

/** Refuses (422) the parameters of `params` whose shape is wrong (see shapeErrors). */
export function refuseMisshapen(params: readonly ParamDoc[]): RequestHandler {
  return (req, _res, next) => {
    const errors = shapeErrors(params, req);
    next(Object.keys(errors).length > 0 ? new ValidationError(errors) : undefined);
  };
}

/** A text, or any text in an array of them (one level: what a form field holds). */
function containsControlCharacters(value: unknown): boolean {
  if (typeof value === 'string') return hasControlCharacters(value);
  return Array.isArray(value) && value.some((v) => typeof v === 'string' && hasControlCharacters(v));
}

export function field(name: string, location: 'body' | 'query' = 'body'): Rule {
  return new Rule(name, location);
}

/** The rules a `validate(...)` handler runs (the route table reads them to describe its routes). */
export type Validator = RequestHandler & { readonly rules: readonly Rule[] };

export function rulesOf(handler: RequestHandler): readonly Rule[] {
  return (handler as Partial<Validator>).rules ?? [];
}

/**
 * Runs every rule, then throws one ValidationError with every failing field, listed in the
 * order the rules are given (the chains finish in any order; clients and tests see one).
 */
export function validate(...rules: Rule[]): Validator {
  const handler = async (req: Request, _res: Response, next: NextFunction) => {
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
  return Object.assign(handler, { rules });
}
