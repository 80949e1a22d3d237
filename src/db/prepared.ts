import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { isPostgres } from '.';

type Row = Record<string, unknown>;
type Param = string | number;

/** What of knex's client this uses: the same steps its Runner takes for a query. */
interface KnexClient {
  acquireConnection(): Promise<unknown>;
  releaseConnection(connection: unknown): Promise<unknown>;
  query(connection: unknown, query: QueryObject): Promise<QueryObject>;
  processResponse(query: QueryObject, runner: unknown): unknown;
  emit(event: string, ...args: unknown[]): boolean;
  postProcessResponse(response: unknown, queryContext: unknown): unknown;
}
interface QueryObject {
  method: 'select';
  sql: string;
  bindings: unknown[];
  options: Record<string, unknown>;
}

/** Stands for the i-th parameter while knex compiles the query; never sent to the database. */
const placeholder = (i: number) => `\u0000prepared parameter ${i}\u0000`;

/**
 * A read whose SQL knex compiles once, at the first call, from `build` (a query whose
 * parameters are the function's arguments, used as `where` values only): each call then binds
 * its arguments into that SQL and runs it on a connection of the pool, without building the
 * query again. SQLite keeps the prepared statement (CachingBetterSqlite3Client); PostgreSQL
 * gets a named prepared statement, parsed and planned once per connection. Like any knex
 * query it takes a pool connection (so it waits for a transaction on SQLite's single one),
 * emits 'query' (and 'query-error', 'query-response') and answers knex's rows.
 */
export function preparedRead<P extends Param[], R = Row>(db: Knex, build: (...params: P) => Knex.QueryBuilder): (...params: P) => Promise<R[]> {
  const client = db.client as unknown as KnexClient;
  let compiled: { sql: string; bindings: unknown[]; slots: number[]; options: Record<string, unknown> } | undefined;
  const compile = (arity: number) => {
    const params = Array.from({ length: arity }, (_, i) => placeholder(i)) as P;
    // knex's `?` form: client.query positions the bindings ($1…) for PostgreSQL, as for any query.
    const native = build(...params).toSQL();
    const bindings = [...native.bindings];
    const slots = bindings.map((value) => params.indexOf(value as Param));
    if (params.some((p) => !bindings.includes(p))) throw new Error(`preparedRead: a parameter is not a binding of ${native.sql}`);
    // A name per SQL text: PostgreSQL refuses one name for two texts on a connection.
    const options = isPostgres(db) ? { name: `prepared_${createHash('sha1').update(native.sql).digest('hex').slice(0, 16)}` } : {};
    return { sql: native.sql, bindings, slots, options };
  };
  return async (...params: P) => {
    compiled ??= compile(params.length);
    const { sql, slots, options } = compiled;
    const bindings = compiled.bindings.map((value, i) => (slots[i] >= 0 ? params[slots[i]] : value));
    const query: QueryObject = { method: 'select', sql, bindings, options };
    const connection = await client.acquireConnection();
    try {
      const done = await client.query(connection, query);
      const rows = client.postProcessResponse(client.processResponse(done, undefined), undefined) as R[];
      client.emit('query-response', rows, done, undefined);
      return rows;
    } finally {
      await client.releaseConnection(connection);
    }
  };
}
