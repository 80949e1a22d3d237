import type { Knex } from 'knex';
import { isPostgres } from './index';

const NESTED_LOOPS_ONLY = ['enable_seqscan', 'enable_hashjoin', 'enable_mergejoin'];

/**
 * Runs `work` in the caller's transaction with PostgreSQL steered to index lookups and nested
 * loops, for statements that start from a short list of ids. Planned from stale statistics
 * (a table an import is filling still looks empty to the planner), they would otherwise hash
 * the whole table for every batch. The settings are local to the transaction and restored
 * after `work`. SQLite plans such statements through the indexes by itself.
 */
export async function withIndexLookups<T>(trx: Knex.Transaction, work: () => Promise<T>): Promise<T> {
  if (!isPostgres(trx)) return work();
  const set = (value: 'on' | 'off') => trx.raw(`select ${NESTED_LOOPS_ONLY.map((name) => `set_config('${name}', '${value}', true)`).join(', ')}`);
  await set('off');
  const result = await work();
  await set('on');
  return result;
}
