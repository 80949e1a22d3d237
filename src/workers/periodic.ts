import { Sleeper } from './sleeper';

export interface Periodic {
  start(): void;
  /** Wakes the sleep, lets the run in hand finish (it may ask `running()` to end early) and returns. */
  stop(): Promise<void>;
}

/**
 * The worker's periodic loops (heartbeat, maintenance, bounce mailbox): `run` at start and then
 * every `everyMs` until stopped. A failed run goes to `onError` and the next comes at its time.
 */
export function periodic(run: (running: () => boolean) => Promise<unknown>, everyMs: number, onError: (err: unknown) => void): Periodic {
  const sleeper = new Sleeper();
  let running = false;
  let loop: Promise<void> = Promise.resolve();
  const isRunning = () => running;
  return {
    start() {
      if (running) return;
      running = true;
      loop = (async () => {
        while (running) {
          try {
            await run(isRunning);
          } catch (err) {
            onError(err);
          }
          if (running) await sleeper.sleep(everyMs);
        }
      })();
    },
    async stop() {
      running = false;
      sleeper.wakeAll();
      await loop;
    },
  };
}
