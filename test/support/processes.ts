import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/lib/paths';

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

/** Polls `check` until it holds, or fails after `timeoutMs`; leaves no timer behind. */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
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
