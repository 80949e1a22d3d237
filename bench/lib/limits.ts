import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { PROJECT_ROOT } from '../../src/lib/paths';
import { seconds, serverCommand } from './server';

/**
 * The limits the benchmarks print beside the project's figures, measured in the same run on the
 * same machine: a bare Express app (the framework and nothing else) started as its own process.
 */

/** A bare Express 5 app: one route answering a small JSON document, like a short API answer. */
const BARE_EXPRESS = `
const express = require('express');
const app = express();
const rows = Array.from({ length: 10 }, (_, i) => ({ id: i + 1, name: 'Type ' + (i + 1), contacts_count: i * 7, created_at: '2026-11-22T09:15:03.123000Z' }));
app.get('/api/v1/contacts-type', (req, res) => res.json({ status: 'success', message: { contactTypes: rows } }));
const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('listening\\n'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

export interface StartedProcess {
  child: ChildProcess;
  pid: number;
  port: number;
  /** Seconds from spawn to the first 200 answer of `probePath`. */
  firstOk: number;
  rssMiB(): number;
  stop(): Promise<void>;
}

/** A free TCP port on 127.0.0.1 (bound and released, so the started process can take it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function probe(port: number, probePath: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: probePath, headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
  });
}

export function rssMiBOf(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

/** Peak resident memory of a process so far (VmHWM), in MiB. */
export function peakRssMiBOf(pid: number): number {
  return Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

/** GETs `path` and reads the whole body: seconds to the last byte, and the body. */
export function timedGet(port: number, path: string): Promise<{ took: number; body: Buffer }> {
  const start = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ took: seconds(start), body: Buffer.concat(chunks) }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/**
 * Spawns `args` with node and polls `probePath` every 2 ms until it answers 200: the time a
 * client waits after a start (or a restart) before it is served.
 */
export async function startAndProbe(
  args: string[],
  env: Record<string, string>,
  probePath: string,
  headers: Record<string, string> = {},
): Promise<StartedProcess> {
  const port = await freePort();
  const start = process.hrtime.bigint();
  const child = spawn(process.execPath, args, {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  let exited = false;
  child.once('exit', () => (exited = true));
  for (;;) {
    if (exited) throw new Error(`${args.join(' ')} exited before answering`);
    if ((await probe(port, probePath, headers)) === 200) break;
    await new Promise((r) => setTimeout(r, 2));
  }
  const firstOk = seconds(start);
  const pid = child.pid!;
  return {
    child,
    pid,
    port,
    firstOk,
    rssMiB: () => rssMiBOf(pid),
    async stop() {
      if (child.exitCode !== null) return;
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await gone;
    },
  };
}

/** Starts the bare Express app and waits for its first 200. */
export function startBareExpress(): Promise<StartedProcess> {
  return startAndProbe(['-e', BARE_EXPRESS], {}, '/api/v1/contacts-type');
}

/** Starts the built server as `npm start` does on `env`'s database and waits for its first authenticated 200. */
export function startProject(env: Record<string, string>, keys: Record<string, string>): Promise<StartedProcess> {
  return startAndProbe(serverCommand(), { API_RATE_LIMIT: '0', ...env }, '/api/v1/contacts-type', keys);
}

/**
 * The same bare Express app answering with the same query the project runs for
 * `GET /contacts-type` (the account's live types with a count of their live contacts), over the
 * same database: better-sqlite3 with one prepared statement, or a pg pool as large as the
 * project's (10) with a named prepared statement. No authentication, no record shaping, rows as
 * the driver gives them. It tells the framework's cost from the database's.
 */
const BARE_EXPRESS_QUERY = `
const express = require('express');
const sql = 'select contact_types.*, (select count(*) from contacts where contacts.user_id = contact_types.user_id' +
  ' and contacts.contact_type_id = contact_types.id and contacts.deleted_at is null) as contacts_count' +
  ' from contact_types where user_id = $1 and deleted_at is null order by id desc';
let rows;
if (process.env.SQLITE_FILE) {
  const statement = new (require('better-sqlite3'))(process.env.SQLITE_FILE, { readonly: true }).prepare(sql.replace('$1', '?'));
  rows = async (userId) => statement.all(userId);
} else {
  const pool = new (require('pg').Pool)({ connectionString: process.env.PG_URL, max: 10 });
  rows = async (userId) => (await pool.query({ name: 'types', text: sql, values: [userId] })).rows;
}
const app = express();
app.get('/api/v1/contacts-type', async (req, res) => res.json({ status: 'success', message: { contactTypes: await rows(Number(process.env.USER_ID)) } }));
const server = app.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

/** Starts bare Express with the project's query for account `userId` over `env`'s database (SQLITE_FILE or PG_URL) and waits for its first 200. */
export function startBareExpressQuery(userId: number, env: { SQLITE_FILE: string } | { PG_URL: string }): Promise<StartedProcess> {
  return startAndProbe([...(process.env.BARE_NODE_ARGS ?? '').split(' ').filter(Boolean), '-e', BARE_EXPRESS_QUERY], { USER_ID: String(userId), ...env }, '/api/v1/contacts-type');
}

/**
 * The limit of `GET /contacts/list` on SQLite: bare `node:http` + better-sqlite3 over the same
 * database file, streaming the same account's live contacts (with country and contact type
 * names joined) newest first as one JSON document, one `JSON.stringify` per row, with
 * back-pressure. No framework, no authentication, no record shaping.
 */
const BARE_LIST = `
const http = require('node:http');
const Database = require('better-sqlite3');
const db = new Database(process.env.SQLITE_FILE, { readonly: true });
const sql = 'select c.*, co.name as country_name, ct.name as ct_name from contacts c left join countries co on co.id = c.country ' +
  'join contact_types ct on ct.id = c.contact_type_id where c.user_id = ? and c.deleted_at is null order by c.id desc';
const server = http.createServer(async (req, res) => {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  let first = true;
  res.write('{"status":"success","message":{"contacts":[');
  for (const row of db.prepare(sql).iterate(1)) {
    if (!res.write((first ? '' : ',') + JSON.stringify(row))) await new Promise((r) => res.once('drain', r));
    first = false;
  }
  res.end(']}}');
});
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

/** Starts the bare list server over `sqliteFile` (account 1's contacts) and waits until it answers. */
export function startBareList(sqliteFile: string): Promise<StartedProcess> {
  return startAndProbe(['-e', BARE_LIST], { SQLITE_FILE: sqliteFile }, '/');
}
