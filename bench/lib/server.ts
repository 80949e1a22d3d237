import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knex from 'knex';
import { withDefaultUser } from '../../src/db';
import { PROJECT_ROOT } from '../../src/lib/paths';

/**
 * What the benchmarks share: a fresh database of either kind (a temporary SQLite file, or a
 * new PostgreSQL database on 127.0.0.1:5432 dropped afterwards), the built server started
 * as its own process on 127.0.0.1 (so its memory and CPU are its own), and its figures.
 */

export type DbKind = 'sqlite' | 'postgres';

/** The tree whose built server is measured: this one, or BENCH_SERVER_ROOT (another checkout, built) to compare. */
export const SERVER_ROOT = process.env.BENCH_SERVER_ROOT ? path.resolve(process.env.BENCH_SERVER_ROOT) : PROJECT_ROOT;

export const PG_ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://127.0.0.1:5432/postgres';

export interface BenchDb {
  kind: DbKind;
  /** Environment that points the server at this database. */
  env: Record<string, string>;
  dir: string;
  drop(): Promise<void>;
}

export async function freshDb(kind: DbKind, label: string): Promise<BenchDb> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `bench-${label}-`));
  if (kind === 'sqlite') {
    return { kind, dir, env: { SQLITE_FILE: path.join(dir, 'bench.sqlite3') }, drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `bench_${label.replace(/\W/g, '_')}_${process.pid}`;
  const admin = knex({ client: 'pg', connection: withDefaultUser(PG_ADMIN_URL), pool: { min: 0, max: 1 } });
  try {
    await admin.raw(`drop database if exists ${name} with (force)`);
    await admin.raw(`create database ${name}`);
  } finally {
    await admin.destroy();
  }
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    kind,
    dir,
    env: { DATABASE_URL: url.toString() },
    async drop() {
      const dropper = knex({ client: 'pg', connection: withDefaultUser(PG_ADMIN_URL), pool: { min: 0, max: 1 } });
      try {
        await dropper.raw(`drop database if exists ${name} with (force)`);
      } finally {
        await dropper.destroy();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

export interface BenchServer {
  port: number;
  pid: number;
  /** The demo account's keys, printed on the first start of a fresh database. */
  keys?: { PublicKey: string; SecretKey: string };
  /** Peak resident memory of the server process so far (VmHWM), in MiB. */
  peakRssMiB(): number;
  /** Starts the peak over from the current RSS (Linux clear_refs), so the next peak is one phase's. */
  resetPeak(): void;
  /** CPU seconds (user + system) the server process has used so far. */
  cpuSeconds(): number;
  stop(): Promise<void>;
}

/**
 * The node flags and the entry file of `npm start` (package.json's start script,
 * `node dist/src/server.js`), so a benchmark runs the server as a user starts it.
 * SERVER_NODE_ARGS adds flags (`--cpu-prof`).
 */
export function serverCommand(): string[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(SERVER_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const words = pkg.scripts.start.split(/\s+/);
  const entry = words.findIndex((w) => w.startsWith('dist/'));
  const flags = words.slice(words.indexOf('node') + 1, entry);
  return [...flags, ...(process.env.SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean), path.join(SERVER_ROOT, words[entry])];
}

/** Starts the built server as `npm start` does (run `npm run build` first) on a free port of 127.0.0.1. */
export async function startServer(db: BenchDb, env: Record<string, string> = {}): Promise<BenchServer> {
  const child: ChildProcess = spawn(process.execPath, serverCommand(), {
    cwd: SERVER_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', HOST: '127.0.0.1', PORT: '0', DATA_DIR: db.dir, LOG_LEVEL: 'warn', API_RATE_LIMIT: '0', ...db.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  const ready = new Promise<{ port: number; keys?: BenchServer['keys'] }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 120_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const port = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      const pub = /PublicKey\s+(\S+)/.exec(out);
      const secret = /SecretKey\s+(\S+)/.exec(out);
      // The demo block is printed in one write right after the listening line.
      if (port && (secret || !/demo account/.test(out))) {
        clearTimeout(timer);
        resolve({ port: Number(port[1]), keys: pub && secret ? { PublicKey: pub[1], SecretKey: secret[1] } : undefined });
      }
    });
    child.once('exit', (code) => reject(new Error(`server exited (${code}): ${out}`)));
  });
  const { port, keys } = await ready;
  const pid = child.pid!;
  return {
    port,
    pid,
    keys,
    peakRssMiB: () => Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024,
    resetPeak: () => fs.writeFileSync(`/proc/${pid}/clear_refs`, '5'),
    cpuSeconds: () => processCpuSeconds(pid),
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** CPU seconds (user + system) a process has used: fields 14 and 15 of proc(5), in ticks of 1/100 s. */
export function processCpuSeconds(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** CPU seconds used so far by the PostgreSQL backends serving a database (the server's pool). */
export async function pgBackendsCpuSeconds(db: BenchDb): Promise<number> {
  if (db.kind !== 'postgres') return 0;
  const name = new URL(db.env.DATABASE_URL).pathname.slice(1);
  const admin = knex({ client: 'pg', connection: withDefaultUser(PG_ADMIN_URL), pool: { min: 0, max: 1 } });
  try {
    const rows: { pid: number }[] = (await admin.raw('select pid from pg_stat_activity where datname = ?', [name])).rows;
    return rows.reduce((sum, r) => sum + processCpuSeconds(r.pid), 0);
  } finally {
    await admin.destroy();
  }
}

/** The machine's state, printed next to every figure: the cores are shared. */
export function machineLine(): string {
  const cpus = os.cpus();
  return `machine: ${cpus.length} × ${cpus[0]?.model.trim() ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB; load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}; node ${process.version}`;
}

export function seconds(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e9;
}
