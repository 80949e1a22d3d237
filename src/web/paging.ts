import type { Request } from 'express';
import { toId } from '../lib/http';
import type { Keyset, KeysetResult, ListResult, Paging } from '../lib/paging';

/** Dashboard lists always read one page: a list is never loaded whole. */
export const PER_PAGE = 50;

export function pagingOf(req: Request, perPage = PER_PAGE): Paging {
  const page = Number(req.query.page);
  return { page: Number.isSafeInteger(page) && page >= 1 ? page : 1, perPage };
}

export interface Pager {
  page: number;
  pages: number;
  total: number;
  from: number;
  to: number;
  first?: string;
  prev?: string;
  next?: string;
  last?: string;
  /** A keyset page's own query (`?…`, or '' for the first page): it shows the page again from its first row, as a delete re-renders it. */
  here?: string;
}

/**
 * What the `pager` macro shows: "51–100 of 312" and links to the pages around it at `path`
 * (the list's page, also when a delete re-renders it), keeping the other query values.
 */
export function pagerOf<T>(req: Request, result: ListResult<T>, path: string): Pager {
  const { page, per_page: perPage, total } = result.pagination ?? { page: 1, per_page: result.rows.length, total: result.rows.length };
  const pages = Math.max(1, Math.ceil(total / Math.max(1, perPage)));
  const href = (n: number) => {
    const query = new URLSearchParams(req.query as Record<string, string>);
    query.set('page', String(n));
    return `${path}?${query.toString()}`;
  };
  const from = total === 0 ? 0 : (page - 1) * perPage + 1;
  return {
    page,
    pages,
    total,
    from,
    to: Math.min(total, from + result.rows.length - 1),
    ...(page > 1 ? { prev: href(Math.min(page - 1, pages)) } : {}),
    ...(page < pages ? { next: href(page + 1) } : {}),
  };
}

/** Where a keyset page sits in its URL; `page` rides along to show positions, never to find rows. */
const PLACE = ['after', 'before', 'last', 'page'];

/**
 * The keyset page a request asks for (`after`, `before` or `last`, else the first page), or
 * undefined for an old `?page=N` address, which offset paging still answers. A cursor that names
 * no id (`after=abc`, `after=-5`) is the first page.
 */
export function keysetOf(req: Request, perPage = PER_PAGE): Keyset | undefined {
  const { after, before, last } = req.query;
  if (after === undefined && before === undefined && last === undefined) return pagingOf(req, perPage).page > 1 ? undefined : { perPage };
  const afterId = toId(after);
  if (afterId !== undefined) return { after: afterId, perPage };
  const beforeId = toId(before);
  if (beforeId !== undefined) return { before: beforeId, perPage };
  return last === '1' ? { last: true, perPage } : { perPage };
}

/** An offset page (an old `?page=N` address) as a keyset result, so its pager goes on by id. */
export function offsetAsKeyset<T>(result: ListResult<T>): KeysetResult<T> {
  const { page, per_page: perPage, total } = result.pagination ?? { page: 1, per_page: result.rows.length, total: result.rows.length };
  return { rows: result.rows, total, perPage, newer: page > 1, older: page * perPage < total };
}

/**
 * The `pager` of a list paged by id at `path`: First, Previous (`before` its first row), Next
 * (`after` its last row) and Last, keeping the other query values. Positions ("51–100 of 312")
 * come from the page number the links carry, clamped to the pages between the ends; the first
 * and the last page are placed exactly (nothing newer, nothing older), so a list that changed
 * meanwhile is right again at either end. Rows are never counted to place a page.
 */
export function keysetPagerOf(req: Request, result: KeysetResult<{ id: number }>, path: string): Pager {
  const { rows, total, perPage } = result;
  const newer = result.newer && rows.length > 0;
  const older = result.older && rows.length > 0;
  const pages = Math.max(1, Math.ceil(total / Math.max(1, perPage)));
  const carried = Number(req.query.page);
  const page = !newer ? 1 : !older ? pages : Math.min(Math.max(2, Number.isSafeInteger(carried) ? carried : 2), Math.max(2, pages - 1));
  const from = rows.length === 0 ? 0 : !newer ? 1 : !older ? Math.max(1, total - rows.length + 1) : (page - 1) * perPage + 1;
  const query = (place: Record<string, string | number>) => {
    const values = new URLSearchParams(req.query as Record<string, string>);
    for (const key of PLACE) values.delete(key);
    for (const [key, value] of Object.entries(place)) values.set(key, String(value));
    const text = values.toString();
    return text ? `?${text}` : '';
  };
  const firstId = rows[0]?.id ?? 0;
  const lastId = rows[rows.length - 1]?.id ?? 0;
  return {
    page,
    pages,
    total,
    from,
    to: rows.length === 0 ? 0 : Math.min(total, from + rows.length - 1),
    // From the first row on (ids are whole numbers): a deleted row's place is taken from below.
    here: query(newer ? { after: firstId + 1, page } : {}),
    ...(newer ? { first: path + query({}), prev: path + query({ before: firstId, page: page - 1 }) } : {}),
    ...(older ? { next: path + query({ after: lastId, page: page + 1 }), last: path + query({ last: 1 }) } : {}),
  };
}
