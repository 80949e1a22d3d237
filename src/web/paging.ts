import type { Request } from 'express';
import type { ListResult, Paging } from '../lib/paging';

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
  prev?: string;
  next?: string;
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
