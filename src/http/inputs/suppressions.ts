import type { Request } from 'express';
import { ValidationError } from '../../lib/errors';
import { messages } from '../../lib/validation';
import { searchOf } from './contacts';

/** The `search` of the suppression list: part of an address, trimmed; undefined when absent or blank. */
export function suppressionSearch(req: Request): string | undefined {
  const search = searchOf(req)?.trim();
  if (search && search.length > 320) throw ValidationError.of('search', messages.max('search', 320));
  return search || undefined;
}
