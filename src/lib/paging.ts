/** The optional `page` / `per_page` extension of every list. */
export interface Paging {
  page: number;
  perPage: number;
}

export interface ListResult<T> {
  rows: T[];
  pagination?: { page: number; per_page: number; total: number };
}
