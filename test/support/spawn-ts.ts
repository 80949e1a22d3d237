import { spawn, ChildProcessWithoutNullStreams, SpawnOptionsWithoutStdio } from 'node:child_process';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/lib/paths';

/**
 * Runs a TypeScript entry point of the project (e.g. `src/server.ts`) in a child process,
 * compiled on the fly by @swc-node/register: no build step in tests.
 */
export function spawnTs(script: string, args: string[], options: SpawnOptionsWithoutStdio = {}): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, ['-r', '@swc-node/register', path.join(PROJECT_ROOT, script), ...args], {
    cwd: PROJECT_ROOT,
    ...options,
    env: { ...process.env, ...options.env },
  });
}

/** Runs to completion and returns the exit code and output. */
export function runTs(script: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawnTs(script, args, { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Resolves with the accumulated stdout once it matches `pattern` (rejects on exit or timeout). */
export function waitForOutput(child: ChildProcessWithoutNullStreams, pattern: RegExp, timeoutMs = 20_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}; stdout: ${out}; stderr: ${err}`)), timeoutMs);
    child.stderr.on('data', (d) => (err += d));
    child.stdout.on('data', (d) => {
      out += d;
      if (pattern.test(out)) {
        clearTimeout(timer);
        resolve(out);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before ${pattern}; stdout: ${out}; stderr: ${err}`));
    });
  });
}

/** Stops a spawned server with SIGTERM and resolves once it has exited. */
export async function stopChild(child: ChildProcessWithoutNullStreams): Promise<void> {
  if (child.exitCode !== null) return;
  const closed = new Promise((resolve) => child.on('close', resolve));
  child.kill('SIGTERM');
  await closed;
}
