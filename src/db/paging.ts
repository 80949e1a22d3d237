import type { Knex } from 'knex';
import type { Keyset, KeysetResult, ListResult, Paging } from '../lib/paging';
import { toCount } from './dialect';

export type { Keyset, KeysetResult, ListResult, Paging };

/**
 * Runs a list query whole, or one page of it with its total when paging is asked for.
 * The count clones the query without its order and columns.
 */
export async function listPage<T>(
  query: Knex.QueryBuilder,
  paging: Paging | undefined,
  map: (row: Record<string, unknown>) => T,
): Promise<ListResult<T>> {
  if (!paging) return { rows: (await query).map(map) };
  const countQuery = query.clone().clearSelect().clearOrder().count({ n: '*' }).first();
  const [rows, count] = await Promise.all([
    query.clone().limit(paging.perPage).offset((paging.page - 1) * paging.perPage),
    countQuery,
  ]);
  return {
    rows: (rows as Record<string, unknown>[]).map(map),
    pagination: { page: paging.page, per_page: paging.perPage, total: toCount((count as { n?: unknown } | undefined)?.n) },
  };
}

/**
 * One page of a list newest first whose total is known apart (a maintained count): the page's
 * ids are picked by `ids` (the same rows, only their id, which an index of (account, id) answers
 * alone), and only those rows are read whole. A deep page then skips index entries rather than
 * wide rows, nothing is counted, and a page in the older half is sought from the oldest end,
 * so no page walks more than half the list.
 */
export async function idSeekPage<T>(
  query: Knex.QueryBuilder,
  ids: Knex.QueryBuilder,
  idColumn: string,
  paging: Paging,
  total: number | Promise<number>,
  map: (row: Record<string, unknown>) => T,
): Promise<ListResult<T>> {
  const count = await total;
  const skip = (paging.page - 1) * paging.perPage;
  const after = count - skip - paging.perPage; // rows older than the page
  const pageIds = ids.clone().clearSelect().clearOrder().select(idColumn);
  if (after < skip && skip < count) {
    pageIds.orderBy(idColumn, 'asc').offset(Math.max(0, after)).limit(Math.min(paging.perPage, count - skip));
  } else {
    pageIds.orderBy(idColumn, 'desc').offset(skip).limit(paging.perPage);
  }
  const rows: Record<string, unknown>[] = await query.clone().whereIn(idColumn, pageIds).orderBy(idColumn, 'desc');
  return { rows: rows.map(map), pagination: { page: paging.page, per_page: paging.perPage, total: count } };
}

/**
 * One page of a filtered list newest first with the number of its matches, from one pass over
 * them: the matches' ids (`matches`, selecting `id`) are found once, and counted by a window beside
 * the page's ids; then only the page's rows are read whole. Counting apart would find the
 * matches twice, which is most of a search's time when its terms are common. A page past the
 * end has no row to carry the count: only then are the matches counted alone.
 */
export async function matchesPage<T>(
  db: Knex,
  query: Knex.QueryBuilder,
  matches: Knex.QueryBuilder,
  idColumn: string,
  paging: Paging,
  map: (row: Record<string, unknown>) => T,
): Promise<ListResult<T>> {
  const found = () => db.from('matches as m').withMaterialized('matches', matches);
  const page: { id: unknown; total: unknown }[] = await found()
    .select('m.id', db.raw('count(*) over () as total'))
    .orderBy('m.id', 'desc')
    .limit(paging.perPage)
    .offset((paging.page - 1) * paging.perPage);
  const total = page.length > 0 ? toCount(page[0].total) : toCount((await found().count({ n: '*' }).first())?.n);
  const ids = page.map((row) => Number(row.id));
  const rows: Record<string, unknown>[] = ids.length > 0 ? await query.clone().whereIn(idColumn, ids).orderBy(idColumn, 'desc') : [];
  return { rows: rows.map(map), pagination: { page: paging.page, per_page: paging.perPage, total } };
}

/**
 * One page of a list newest first, placed by a row's id instead of a page number (`Keyset`):
 * as in `idSeekPage` only the page's ids are picked by `ids` and then those rows read, but the
 * pick seeks to the cursor in the (account, id) index, so a page deep in the list costs what the
 * first one does. One id more than the page says whether the list goes on past it. Going back
 * to fewer than a page of newer rows gives the first page; going on past the oldest row, the
 * last. The last page holds what is left over the whole pages before it (from `total`), so its
 * rows sit where page numbers would put them.
 */
export async function idKeysetPage<T>(
  query: Knex.QueryBuilder,
  ids: Knex.QueryBuilder,
  idColumn: string,
  keyset: Keyset,
  total: number | Promise<number>,
  map: (row: Record<string, unknown>) => T,
): Promise<KeysetResult<T>> {
  const { perPage } = keyset;
  const pick = () => ids.clone().clearSelect().clearOrder().select(idColumn);
  const read = async (pageIds: Knex.QueryBuilder): Promise<Record<string, unknown>[]> => query.clone().whereIn(idColumn, pageIds).orderBy(idColumn, 'desc');
  const first = async () => {
    const rows = await read(pick().orderBy(idColumn, 'desc').limit(perPage + 1));
    return { rows: rows.slice(0, perPage), newer: false, older: rows.length > perPage };
  };
  const last = async (count: number) => {
    const size = count - (Math.max(1, Math.ceil(count / perPage)) - 1) * perPage;
    const rows = size > 0 ? await read(pick().orderBy(idColumn, 'asc').limit(size)) : [];
    return { rows, newer: count > rows.length, older: false };
  };
  const counted = Promise.resolve(total);
  const page = async () => {
    if (keyset.last) return last(await counted);
    if (keyset.after !== undefined) {
      const rows = await read(pick().where(idColumn, '<', keyset.after).orderBy(idColumn, 'desc').limit(perPage + 1));
      if (rows.length === 0) return last(await counted);
      // The cursor came from a page that showed a newer row.
      return { rows: rows.slice(0, perPage), newer: true, older: rows.length > perPage };
    }
    if (keyset.before !== undefined) {
      const rows = await read(pick().where(idColumn, '>', keyset.before).orderBy(idColumn, 'asc').limit(perPage + 1));
      if (rows.length <= perPage) return first();
      return { rows: rows.slice(1), newer: true, older: true };
    }
    return first();
  };
  const [count, { rows, newer, older }] = await Promise.all([counted, page()]);
  return { rows: rows.map(map), total: count, perPage, newer, older };
}

/**
 * Walks a query newest first in chunks of `size` rows, each chunk one short query keyed on
 * the id (`where id < last`). Large lists stream this way on both databases: memory holds
 * one chunk, and the connection is free between chunks (SQLite has only one, and knex's
 * `.stream()` on better-sqlite3 reads every row before it emits the first).
 */
export async function* idChunks(
  query: Knex.QueryBuilder,
  idColumn: string,
  size = 1000,
): AsyncGenerator<Record<string, unknown>[]> {
  let last: number | undefined;
  for (;;) {
    const chunk = query.clone().orderBy(idColumn, 'desc').limit(size);
    if (last !== undefined) chunk.where(idColumn, '<', last);
    const rows: Record<string, unknown>[] = await chunk;
    if (rows.length > 0) yield rows;
    if (rows.length < size) return;
    last = Number(rows[rows.length - 1].id);
  }
}
