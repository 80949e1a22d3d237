/**
 * Waiting for a state, never for a length of time: `until` polls a check and returns as soon as it
 * holds; its time limit only bounds a fault.
 */

/** Polls `check` until it holds, or fails after `timeoutMs`; leaves no timer behind. */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Reads `read` until `done` holds for what it read, and answers that. */
export async function untilRead<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number, what: string): Promise<T> {
  let value = await read();
  await until(async () => done(value) || done((value = await read())), timeoutMs, what);
  return value;
}
