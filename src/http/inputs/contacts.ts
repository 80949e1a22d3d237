import type { Request } from 'express';
import { CONTACT_TEXT_COLUMNS, ContactTextColumn } from '../../lib/constants';
import { ValidationError } from '../../lib/errors';
import { toId } from '../../lib/http';
import { isBlank, messages } from '../../lib/validation';
import { currentTimeZone } from '../../lib/time-zones';
import { field, Rule } from '../validation';
import { param } from '../param-doc';
import type { ContactInput } from '../../services/audience/contacts';

export const EMAIL_MAX = 320;

/**
 * The contact parameters of add and update. `countryRequired: false` is the dashboard's edit of
 * a contact that came in without a country (an import, a signup form): it may stay without one.
 */
export function contactRules({ countryRequired = true } = {}): Rule[] {
  return [
    field('contact_type_id').required().integer(),
    field('email').required().string().maxLength(EMAIL_MAX).email(),
    countryRequired ? field('country').required().integer() : field('country').optional().integer(),
    field('alt_email').optional().string().maxLength(EMAIL_MAX).email(),
    ...Object.entries(CONTACT_TEXT_COLUMNS).map(([name, max]) => field(name).optional().string().maxLength(max)),
    field('time_zone')
      .optional()
      .string()
      .describe({ maxLength: 64 }, 'Extension: the contact\'s IANA time zone (`Europe/Paris`); empty: derived from the country and state, else the account\'s zone.')
      .check((v) => currentTimeZone(String(v)) !== undefined, messages.selected('time_zone')),
    field('custom_field')
      .optional()
      .describe({ type: 'object', additionalProperties: { type: 'string' } }, 'Custom field values by field name: `custom_field[<name>]`.')
      .check((v) => typeof v === 'object' && v !== null && !Array.isArray(v), messages.array('custom_field')),
  ];
}

export function contactInput(req: Request): ContactInput {
  const body = req.body as Record<string, unknown>;
  const text: ContactInput['text'] = {};
  for (const column of Object.keys(CONTACT_TEXT_COLUMNS) as ContactTextColumn[]) {
    if (body[column] !== undefined && body[column] !== null) text[column] = String(body[column]);
  }
  return {
    contact_type_id: toId(body.contact_type_id) ?? 0,
    email: String(body.email),
    // Left empty where it may be (see contactRules), the contact keeps having none.
    country: isBlank(body.country) ? undefined : (toId(body.country) ?? 0),
    alt_email: body.alt_email === undefined ? undefined : body.alt_email === null ? null : String(body.alt_email),
    text,
    // Stored by its current name (an alias such as Asia/Calcutta becomes Asia/Kolkata); empty clears it.
    time_zone: body.time_zone === undefined ? undefined : isBlank(body.time_zone) ? null : (currentTimeZone(String(body.time_zone)) ?? null),
    custom_field: body.custom_field as Record<string, unknown> | undefined,
  };
}

export const SEARCH_PARAM = param('search', 'query', { type: 'string' }, 'Extension: a fragment of the first name, last name, full name or email, any case.');

/** The optional `search` extension: a name or email fragment. */
export function searchOf(req: Request): string | undefined {
  const search = req.query.search;
  if (search === undefined) return undefined;
  if (typeof search !== 'string') throw ValidationError.of('search', messages.string('search'));
  return search;
}
