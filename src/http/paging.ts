import type { Request } from 'express';
import { LIMITS } from '../lib/constants';
import { ValidationError } from '../lib/errors';
import type { ListResult, Paging } from '../lib/paging';
import { isInteger } from '../lib/validation';
import { param, ParamDoc } from './param-doc';

export type { ListResult, Paging };

/** How the document describes the paging extension that pagingOf reads. */
export const PAGING_PARAMS: readonly ParamDoc[] = [
  param('page', 'query', { type: 'integer', minimum: 1, maximum: LIMITS.maxId }, 'Extension: the page to answer (100 records a page unless per_page says otherwise); adds message.pagination.'),
  param('per_page', 'query', { type: 'integer', minimum: 1, maximum: LIMITS.perPageMax }, 'Extension: records a page.'),
];

/** The optional `page` / `per_page` extension: both absent means the whole list. */
export function pagingOf(req: Request): Paging | undefined {
  const { page, per_page: perPage } = req.query as Record<string, unknown>;
  if (page === undefined && perPage === undefined) return undefined;
  const errors: Record<string, string[]> = {};
  if (page !== undefined && !(isInteger(page) && Number(page) >= 1)) {
    errors.page = ['The page must be at least 1.'];
  } else if (page !== undefined && Number(page) > LIMITS.maxId) {
    errors.page = [`The page may not be greater than ${LIMITS.maxId}.`];
  }
  if (perPage !== undefined && !(isInteger(perPage) && Number(perPage) >= 1 && Number(perPage) <= LIMITS.perPageMax)) {
    errors.per_page = [`The per page must be between 1 and ${LIMITS.perPageMax}.`];
  }
  if (Object.keys(errors).length) throw new ValidationError(errors);
  return { page: page === undefined ? 1 : Number(page), perPage: perPage === undefined ? 100 : Number(perPage) };
}

/** `{ [collection]: rows }`, plus `pagination` when the list was paged. */
export function listMessage<T>(collection: string, result: ListResult<T>): Record<string, unknown> {
  return result.pagination ? { [collection]: result.rows, pagination: result.pagination } : { [collection]: result.rows };
}
