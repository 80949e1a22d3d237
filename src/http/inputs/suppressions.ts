import type { Request } from 'express';
import { ValidationError } from '../../lib/errors';
import { messages } from '../../lib/validation';
import { BOUNCE_CLASSES, isBounceClass, type BounceClass } from '../../lib/bounce-class';
import { param } from '../param-doc';
import { searchOf } from './contacts';

export const SUPPRESSION_SEARCH_PARAM = param('search', 'query', { type: 'string', maxLength: 320 }, 'Part of an address, any case.');

/** The `search` of the suppression list: part of an address, trimmed; undefined when absent or blank. */
export function suppressionSearch(req: Request): string | undefined {
  const search = searchOf(req)?.trim();
  if (search && search.length > 320) throw ValidationError.of('search', messages.max('search', 320));
  return search || undefined;
}

export const SUPPRESSION_CLASS_PARAM = param('bounce_class', 'query', { type: 'string', enum: [...BOUNCE_CLASSES] }, 'Only the addresses suppressed for a refusal of this class.');

/** The `bounce_class` filter of the suppression list; a value that is not a class is a 422. */
export function suppressionClass(req: Request): BounceClass | undefined {
  const value = typeof req.query.bounce_class === 'string' ? req.query.bounce_class.trim() : undefined;
  if (!value) return undefined;
  if (!isBounceClass(value)) throw ValidationError.of('bounce_class', messages.selected('bounce_class'));
  return value;
}
