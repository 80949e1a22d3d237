import type { Logger } from 'pino';
import type { HealthService } from '../services/operations/health';
import { periodic, Periodic } from './periodic';

/** How often a worker says it is alive; an alert on the heartbeat's age waits a few of these. */
export const HEARTBEAT_EVERY_MS = 10_000;

export type Heartbeat = Periodic;

/**
 * Writes the worker's row in `worker_heartbeats` at start and every `everyMs`, so /healthz,
 * /readyz and the metrics of every web process can tell how long ago a worker was alive.
 */
export function createHeartbeat(deps: { health: HealthService; logger: Logger }, owner: string, role: string, everyMs = HEARTBEAT_EVERY_MS): Heartbeat {
  const startedAt = new Date();
  return periodic(() => deps.health.beat(owner, role, startedAt), everyMs, (err) => deps.logger.error({ err }, 'writing the worker heartbeat failed'));
}
