import type { Logger } from 'pino';
import type { HealthService } from '../services/operations/health';
import { Sleeper } from './sleeper';

/** How often a worker says it is alive; an alert on the heartbeat's age waits a few of these. */
export const HEARTBEAT_EVERY_MS = 10_000;

export interface Heartbeat {
  start(): void;
  stop(): Promise<void>;
}

/**
 * Writes the worker's row in `worker_heartbeats` at start and every `everyMs`, so /healthz,
 * /readyz and the metrics of every web process can tell how long ago a worker was alive.
 */
export function createHeartbeat(deps: { health: HealthService; logger: Logger }, owner: string, role: string, everyMs = HEARTBEAT_EVERY_MS): Heartbeat {
  const sleeper = new Sleeper();
  const startedAt = new Date();
  let running = false;
  let loop: Promise<void> | undefined;

  async function beat(): Promise<void> {
    while (running) {
      await deps.health.beat(owner, role, startedAt).catch((err) => deps.logger.error({ err }, 'writing the worker heartbeat failed'));
      if (running) await sleeper.sleep(everyMs);
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      loop = beat();
    },
    async stop() {
      running = false;
      sleeper.wakeAll();
      await loop;
    },
  };
}
