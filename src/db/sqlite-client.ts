import { BetterSqlite3Client } from './knex-internals';

/**
 * Knex's better-sqlite3 client prepares every query anew (parse and plan, ~13% of a small
 * API request's CPU). This client keeps the prepared statements of each connection, the most
 * recently used `STATEMENTS_PER_CONNECTION` of them, keyed by their SQL. A statement still
 * busy (an open iterator) is not shared: that query gets a fresh one.
 */
export const STATEMENTS_PER_CONNECTION = 200;

export interface Statement {
  reader: boolean;
  busy: boolean;
  safeIntegers(on: boolean): Statement;
  all(bindings?: unknown[]): unknown;
  run(bindings?: unknown[]): { lastInsertRowid: number | bigint; changes: number };
}
export interface Connection {
  prepare(sql: string): Statement;
}
interface QueryObject {
  sql: string;
  bindings?: unknown[];
  options?: { safeIntegers?: unknown };
  response?: unknown;
  context?: { lastID: number | bigint; changes: number };
}


const caches = new WeakMap<Connection, Map<string, Statement>>();

/** The connection's statement for `sql`, most recently used last (a Map keeps insertion order). */
export function cachedStatement(connection: Connection, sql: string): Statement {
  let cache = caches.get(connection);
  if (!cache) caches.set(connection, (cache = new Map()));
  const cached = cache.get(sql);
  if (cached && !cached.busy) {
    cache.delete(sql);
    cache.set(sql, cached);
    return cached;
  }
  const statement = connection.prepare(sql);
  if (cached) return statement;
  cache.set(sql, statement);
  if (cache.size > STATEMENTS_PER_CONNECTION) cache.delete(cache.keys().next().value as string);
  return statement;
}

export class CachingBetterSqlite3Client extends BetterSqlite3Client {
  async _query(connection: Connection, obj: QueryObject): Promise<QueryObject> {
    if (!obj.sql) throw new Error('The query is empty');
    if (!connection) throw new Error('No connection provided');
    const safeIntegers = typeof obj.options?.safeIntegers === 'boolean' ? obj.options.safeIntegers : undefined;
    // A per-query integer mode would stick to a shared statement: such a query prepares its own.
    const statement = safeIntegers === undefined ? cachedStatement(connection, obj.sql) : connection.prepare(obj.sql).safeIntegers(safeIntegers);
    const bindings = this._formatBindings(obj.bindings);
    if (statement.reader) {
      obj.response = statement.all(bindings);
      return obj;
    }
    const response = statement.run(bindings);
    obj.response = response;
    obj.context = { lastID: response.lastInsertRowid, changes: response.changes };
    return obj;
  }
}
