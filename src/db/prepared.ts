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
  const sqlite = !isPostgres(db);
  return async (...params: P) => {
    compiled ??= compile(params.length);
    const { sql, slots, options } = compiled;
    const bindings = compiled.bindings.map((value, i) => (slots[i] >= 0 ? params[slots[i]] : value));
    const query: QueryObject = { method: 'select', sql, bindings, options };
    const connection = await client.acquireConnection();
    if (sqlite) {
      try {
        return runOnSqlite(client, connection as SqliteConnection, query) as R[];
      } finally {
        void client.releaseConnection(connection);
      }
    }
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

interface SqliteStatement {
  raw(on: boolean): SqliteStatement;
  columns(): { name: string }[];
  all(bindings: unknown[]): unknown[][];
}
interface SqliteConnection {
  prepare(sql: string): SqliteStatement;
  __knexUid?: string;
  __knexTxId?: string;
}

/** Per connection, per SQL: the statement in raw mode (rows as arrays) and the function that makes each row an object. */
const sqliteStatements = new WeakMap<SqliteConnection, Map<string, { statement: SqliteStatement; toRow: (values: unknown[]) => Row }>>();

/**
 * Runs a prepared read on better-sqlite3 as knex's client would (the same 'query' and
 * 'query-error' events and error message), but synchronously and with rows made by a
 * function compiled for the statement's columns: better-sqlite3 builds each row object
 * property by property, a quarter of a small list's time. A column named twice keeps its
 * first place and its last value, as better-sqlite3 has it.
 */
function runOnSqlite(client: KnexClient, connection: SqliteConnection, query: QueryObject): Row[] {
  const { __knexUid, __knexTxId } = connection;
  client.emit('query', { __knexUid, __knexTxId, ...query });
  let cache = sqliteStatements.get(connection);
  if (!cache) sqliteStatements.set(connection, (cache = new Map()));
  try {
    let prepared = cache.get(query.sql);
    if (!prepared) {
      const statement = connection.prepare(query.sql).raw(true);
      const fields = statement.columns().map((column, i) => `${JSON.stringify(column.name)}: values[${i}]`);
      // eslint-disable-next-line @typescript-eslint/no-implied-eval
      const toRow = new Function('values', `return { ${fields.join(', ')} };`) as (values: unknown[]) => Row;
      cache.set(query.sql, (prepared = { statement, toRow }));
    }
    const rows = prepared.statement.all(query.bindings).map(prepared.toRow);
    client.emit('query-response', rows, { __knexUid, __knexTxId, ...query }, undefined);
    return rows;
  } catch (err) {
    if (err instanceof Error) err.message = `${query.sql} - ${err.message}`;
    client.emit('query-error', err, { __knexUid, __knexTxId, ...query });
    throw err;
  }
}
