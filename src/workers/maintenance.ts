import type { Logger } from 'pino';
import type { PruneCounts, RetentionService } from '../services/maintenance/retention';
import type { SegmentsService } from '../services/audience/segments';
import { periodic } from './periodic';

/** Time between two maintenance runs: retention is counted in days, so once an hour is plenty. */
const INTERVAL_MS = 3600_000;

export interface MaintenanceJob {
  /** One run now (tests, and the first run at start). */
  runOnce(): Promise<PruneCounts>;
  start(): void;
  /** Ends the run in hand after its current batch, and returns. */
  stop(): Promise<void>;
}

/**
 * The worker's maintenance loop: prunes old data (the retention service decides what) at start
 * and then every hour. Several workers may run it at once; each batch deletes what is left.
 * Given the segments, it also rolls segments on relative dates and engagement forward.
 */
export function createMaintenanceJob(
  { retention, segments, logger }: { retention: Pick<RetentionService, 'prune'>; segments?: Pick<SegmentsService, 'refreshAllMoving'>; logger: Logger },
  /** now: the clock that ages the data (tests move it instead of waiting); batchSize: rows per statement. */
  options: { intervalMs?: number; now?: () => Date; batchSize?: number } = {},
): MaintenanceJob {
  const prune = (shouldStop?: () => boolean) => retention.prune({ now: options.now?.(), batchSize: options.batchSize, shouldStop });
  const loop = periodic(
    async (running) => {
      const counts = await prune(() => !running());
      if (segments && running()) await segments.refreshAllMoving(() => !running());
      return counts;
    },
    options.intervalMs ?? INTERVAL_MS,
    (err) => logger.error({ err }, 'maintenance run failed; trying again at the next run'),
  );
  return { runOnce: () => prune(), ...loop };
}
