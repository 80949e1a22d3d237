import type { Request } from 'express';
import { ValidationError } from '../../lib/errors';
import { messages } from '../../lib/validation';
import { param } from '../param-doc';
import { searchOf } from './contacts';

export const SUPPRESSION_SEARCH_PARAM = param('search', 'query', { type: 'string', maxLength: 320 }, 'Part of an address, any case.');

/** The `search` of the suppression list: part of an address, trimmed; undefined when absent or blank. */
export function suppressionSearch(req: Request): string | undefined {
  const search = searchOf(req)?.trim();
  if (search && search.length > 320) throw ValidationError.of('search', messages.max('search', 320));
  return search || undefined;
}
