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
