import type { Request } from 'express';
import { CAMPAIGN_LIMITS } from '../lib/constants';
import { isBlank, isScalar, messages, toFlag } from '../lib/validation';
import { field, Rule } from './validation';

/** A `contacts_{id}` / `segments_{id}` reference, as the OpenAPI document writes it. */
export const RECIPIENT_REF_PATTERN = '^(contacts|segments)_[0-9]+$';
import { parseRecipientRef, recipientEntries } from '../services/campaigns/campaign-refs';
import type { TrackingSwitches } from '../services/campaigns/tracking-switches';

/** Parameters shared by the single-send and automation routes. */

/**
 * The `utr` of a request: a body field on POST, else the query string (clients use both).
 * UUIDs are case-insensitive; stored ones are lower case (PostgreSQL's uuid type compares
 * them so, SQLite's text would not).
 */
export function utrOf(req: Request): string {
  const value = req.body?.utr ?? req.query.utr;
  return typeof value === 'string' ? value.trim().toLowerCase() : '';
}

/** `utr` is required, in the body or the query. */
export function utrField(): Rule {
  const rule = field('utr').describe({ type: 'string', format: 'uuid' }, 'A body field on POST, else in the query string.');
  rule.doc.in = 'either';
  rule.doc.required = true;
  rule.custom((_value, { req }) => {
    const value = (req as Request).body?.utr ?? (req as Request).query.utr;
    return isBlank(value) || isScalar(value);
  }, messages.string('utr'));
  rule.custom((_value, { req }) => !isBlank(utrOf(req as Request)), messages.required('utr'), { bail: false });
  return rule;
}

/** A list of `contacts_{id}` / `segments_{id}` entries (array, indexed fields or comma-separated). */
export function recipientList(name: string, required: boolean): Rule {
  const rule = field(name);
  if (required) rule.required();
  else rule.optional();
  const entries = (value: unknown) => recipientEntries(value);
  return rule
    .describe(
      { type: 'array', items: { type: 'string', pattern: RECIPIENT_REF_PATTERN }, maxItems: CAMPAIGN_LIMITS.recipientRefs },
      'Entries `contacts_{contact_type_id}` or `segments_{segment_id}`; one comma-separated string is accepted too.',
    )
    .check((v) => !required || entries(v).length > 0, messages.required(name))
    .check((v) => entries(v).length <= CAMPAIGN_LIMITS.recipientRefs, messages.arrayMax(name, CAMPAIGN_LIMITS.recipientRefs))
    .check((v) => entries(v).every((entry) => parseRecipientRef(entry) !== undefined), messages.format(name));
}

/** `template_json`: text, or (in a JSON body) the design object itself, stored as its JSON text. */
export function templateJsonField(): Rule {
  return field('template_json')
    .optional()
    .describe({ type: ['string', 'object'] }, 'The design as JSON text (in a JSON body, the design object itself); excludes template_html.')
    .check((v) => typeof v === 'string' || (typeof v === 'object' && v !== null), messages.string('template_json'));
}

/** `template_html` is text. */
export function templateHtmlField(): Rule {
  return field('template_html').optional().string().describe({}, 'Excludes template_json.');
}

/** The stored design text of `template_json` / `template_html`; null when not given. */
export function templateText(value: unknown): string | null {
  if (isBlank(value)) return null;
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** `track_opens` / `track_clicks` (extension): 0 or 1; absent means the account's default (create) or unchanged (update). */
export function trackingFields(): Rule[] {
  return [field('track_opens').optional().boolean(), field('track_clicks').optional().boolean()];
}

/** The tracking switches a request gives; a switch not given is left out. */
export function trackingInput(body: Record<string, unknown>): TrackingSwitches {
  const out: TrackingSwitches = {};
  for (const name of ['track_opens', 'track_clicks'] as const) {
    const flag = isBlank(body[name]) ? undefined : toFlag(body[name]);
    if (flag !== undefined) out[name] = flag;
  }
  return out;
}
