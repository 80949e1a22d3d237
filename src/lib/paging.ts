/** The optional `page` / `per_page` extension of every list. */
export interface Paging {
  page: number;
  perPage: number;
}

export interface ListResult<T> {
  rows: T[];
  pagination?: { page: number; per_page: number; total: number };
}

/**
 * Where a page of a list newest first starts, by a row's id rather than a page number: the
 * newest page (nothing given), the rows older than `after`, the rows just newer than `before`,
 * or the oldest page (`last`).
 */
export interface Keyset {
  after?: number;
  before?: number;
  last?: boolean;
  perPage: number;
}

/**
 * One keyset page newest first with the list's total, and whether rows lie beyond it on each side
 * (a page without newer rows is the first, one without older rows the last).
 */
export interface KeysetResult<T> {
  rows: T[];
  total: number;
  perPage: number;
  newer: boolean;
  older: boolean;
}
