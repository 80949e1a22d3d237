import type { NextFunction, Request, Response } from 'express';
import { AB_TEST_LIMITS, AB_VARIANT_FIELDS, AB_WINNER_METRICS, AbWinnerMetric, CAMPAIGN_LIMITS } from '../../lib/constants';
import { FieldErrors, ValidationError } from '../../lib/errors';
import { asArray } from '../../lib/http';
import { hasControlCharacters, humanName, isBlank, isInteger, isScalar, messages } from '../../lib/validation';
import type { AbTestInput, AbVariantInput } from '../../services/campaigns/ab-tests';
import { utrField } from '../campaign-params';
import { field, Rule, validate, Validator } from '../validation';

const between = (name: string, min: number, max: number) => `The ${humanName(name)} must be between ${min} and ${max}.`;

function wholeNumberBetween(name: string, min: number, max: number): Rule {
  return field(name)
    .required()
    .integer()
    .describe({ minimum: min, maximum: max })
    .check((v) => Number(v) >= min && Number(v) <= max, between(name, min, max));
}

const variantSchema = {
  type: 'object',
  properties: {
    subject: { type: 'string', maxLength: CAMPAIGN_LIMITS.subject },
    preheader: { type: 'string', maxLength: CAMPAIGN_LIMITS.subject },
    from_name: { type: 'string', maxLength: AB_TEST_LIMITS.fromName },
    template_html: { type: 'string' },
    template_json: { type: ['string', 'object'] },
  },
};

/** The top-level fields of an A/B test; each variant's own fields are checked by variantErrors. */
export const abTestFields = () => [
  utrField(),
  field('variants')
    .required()
    .describe({}, `${AB_TEST_LIMITS.variantsMin} to ${AB_TEST_LIMITS.variantsMax} variants, in order (their indexes count from 0): each sets any of subject, preheader, from_name, template_html (or template_json); what it leaves out is the send's own. Indexed form fields (\`variants[0][subject]\`) or JSON.`)
    .array(variantSchema, AB_TEST_LIMITS.variantsMax)
    .check((v) => asArray(v).length >= AB_TEST_LIMITS.variantsMin, `The variants must have at least ${AB_TEST_LIMITS.variantsMin} items.`),
  wholeNumberBetween('test_percent', AB_TEST_LIMITS.percentMin, AB_TEST_LIMITS.percentMax).describe({}, 'The share of the audience (in percent) that receives the test, split evenly over the variants.'),
  field('winner_metric').required().oneOf(AB_WINNER_METRICS).describe({}, 'What chooses the winner: the rate of unique opens (automated opens excluded) or of unique clicks, over delivered messages.'),
  wholeNumberBetween('wait_minutes', AB_TEST_LIMITS.waitMin, AB_TEST_LIMITS.waitMax).describe({}, 'How long after the send starts the winner goes to the rest.'),
];

/** The fields of each variant, named like `variants.0.subject` (Laravel's nested names). */
export function variantErrors(value: unknown): FieldErrors {
  const errors: FieldErrors = {};
  if (!Array.isArray(value)) return errors;
  value.forEach((variant, i) => {
    const at = `variants.${i}`;
    if (variant === null || typeof variant !== 'object' || Array.isArray(variant)) {
      if (!isBlank(variant)) errors[at] = [`The ${at} must be an object.`];
      return;
    }
    const item = variant as Record<string, unknown>;
    for (const name of AB_VARIANT_FIELDS) {
      const v = item[name];
      const path = `${at}.${name}`;
      if (isBlank(v)) continue;
      if (name === 'template_json' && typeof v === 'object') continue;
      if (!isScalar(v) || typeof v === 'boolean') errors[path] = [messages.string(path)];
      else if (hasControlCharacters(String(v)) && name !== 'template_html' && name !== 'template_json') errors[path] = [messages.control(path)];
      else if (name === 'from_name' && String(v).length > AB_TEST_LIMITS.fromName) errors[path] = [messages.max(path, AB_TEST_LIMITS.fromName)];
      else if ((name === 'subject' || name === 'preheader') && String(v).length > CAMPAIGN_LIMITS.subject) errors[path] = [messages.max(path, CAMPAIGN_LIMITS.subject)];
    }
    if (!isBlank(item.template_json) && !isBlank(item.template_html)) {
      errors[`${at}.template_json`] ??= [`The ${at}.template_json field prohibits ${at}.template_html from being present.`];
    }
  });
  return errors;
}

/**
 * Runs the top-level rules and the variants' own checks, and answers every failing field at
 * once (one 422, the variants' fields after `variants`). Carries the rules for the route table.
 */
export function validateAbTest(): Validator {
  const top = validate(...abTestFields());
  const handler = async (req: Request, res: Response, next: NextFunction) => {
    let errors: FieldErrors = {};
    try {
      await top(req, res, () => undefined);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      errors = err.fields;
    }
    const nested = errors.variants ? {} : variantErrors(req.body?.variants);
    const all: FieldErrors = {};
    for (const [name, list] of Object.entries(errors)) {
      all[name] = list;
      if (name === 'variants') Object.assign(all, nested);
    }
    if (!errors.variants) Object.assign(all, nested);
    if (Object.keys(all).length) throw new ValidationError(all);
    next();
  };
  return Object.assign(handler, { rules: top.rules });
}

const text = (value: unknown) => (isBlank(value) ? null : typeof value === 'object' ? JSON.stringify(value) : String(value).trim());

export function abTestInput(body: Record<string, unknown>): AbTestInput {
  return {
    variants: asArray(body.variants).map((v): AbVariantInput => {
      const item = (v ?? {}) as Record<string, unknown>;
      return {
        subject: text(item.subject),
        preheader: text(item.preheader),
        from_name: text(item.from_name),
        // Templates keep their spaces as written.
        template_html: isBlank(item.template_html) ? null : String(item.template_html),
        template_json: text(item.template_json),
      };
    }),
    test_percent: Number(body.test_percent),
    winner_metric: String(body.winner_metric).trim() as AbWinnerMetric,
    wait_minutes: Number(body.wait_minutes),
  };
}

/** `variant` of the manual choice: the index of a saved variant, from 0. */
export const chooseFields = () => [
  utrField(),
  field('variant', 'query').required().integer(0).describe({}, 'The index of the variant to send to the rest (from 0, in the order they were saved).'),
];

export const variantOf = (req: Request): number => (isInteger(req.query.variant) ? Number(req.query.variant) : -1);
