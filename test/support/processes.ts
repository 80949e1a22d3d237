import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/lib/paths';
import type { Harness } from './harness';
import { TMP_DIR } from './test-db';
import { until } from './wait';

export { until };

export interface ServiceProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code (or signal) once the process has ended. */
  exited: Promise<number | string>;
}

/**
 * Runs `src/server.ts` from the sources in a real child process (compiled on load by
 * @swc-node/register, as spawnTs does) with only the given environment, or the
 * built server (`dist/src/server.js`, as `npm start` runs it; `npm run build` first) when `built` is set.
 */
export function startServiceProcess(args: string[], env: Record<string, string>, built = false, nodeArgs: string[] = []): ServiceProcess {
  const entry = built
    ? [path.join(PROJECT_ROOT, 'dist/src/server.js')]
    : ['-r', '@swc-node/register', path.join(PROJECT_ROOT, 'src/server.ts')];
  const child = spawn(process.execPath, [...nodeArgs, ...entry, ...args], {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', USER: process.env.USER ?? '', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return { child, output: () => output, exited };
}

export interface ServiceProcesses {
  /**
   * Starts `src/server.ts` (the build with `built`) with `args` on the harness's database, with
   * its base URL and secret, a data directory of the test file's own, and `env` on top.
   */
  start(args: string[], env?: Record<string, string>, built?: boolean): ServiceProcess;
  /** The processes started in the current test. */
  readonly started: readonly ServiceProcess[];
}

/**
 * Service processes for the tests of a describe block: call after useHarness, and start them in
 * a test. After each test, passed or failed, those still running are killed and waited for, so
 * none outlives its test or holds the database as it is dropped.
 */
export function useServiceProcesses(h: Harness, name: string): ServiceProcesses {
  const started: ServiceProcess[] = [];
  afterEach(async () => {
    const stopping = started.splice(0);
    for (const p of stopping) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(stopping.map((p) => p.exited));
  });
  return {
    started,
    start(args, env = {}, built = false) {
      const { config } = h.runtime;
      const service = startServiceProcess(
        args,
        {
          ...(config.databaseUrl ? { DATABASE_URL: config.databaseUrl } : { SQLITE_FILE: config.sqliteFile }),
          DATA_DIR: path.join(TMP_DIR, `${name}-${process.pid}`),
          BASE_URL: config.baseUrl,
          APP_SECRET: h.runtime.secret,
          ...env,
        },
        built,
      );
      started.push(service);
      return service;
    },
  };
}

/**
 * Polls a count until it reaches `target`; fails only when it stops moving for `stallMs`. Work
 * spread over worker processes goes at the machine's pace: on a busy machine it is slower, and
 * only a count that stops is a fault.
 */
export async function untilCount(count: () => Promise<number>, target: number, stallMs: number, what: string): Promise<void> {
  let last = -1;
  let movedAt = Date.now();
  for (;;) {
    const n = await count();
    if (n >= target) return;
    if (n !== last) {
      last = n;
      movedAt = Date.now();
    } else if (Date.now() - movedAt > stallMs) throw new Error(`${what}: ${n} of ${target}, with no progress for ${stallMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
