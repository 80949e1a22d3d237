import { isPostgres } from '../../db';
import { countApiHit, dropApiWindowsBefore, resetApiHits, uncountApiHit } from '../../db/rate-limits';
import { sha256 } from '../../lib/crypto';
import type { ServiceDeps } from '../context';

/**
 * API_RATE_LIMIT's counts. On PostgreSQL, where any number of web processes may serve one
 * database, they are kept in the database (`api_rate_windows`), so the limit holds across all
 * of them; on SQLite (one host, usually one process) each process counts in memory and
 * `shared` is false. Keys are stored hashed (a client chooses them); windows of the past are
 * dropped once per window by each process, so the table holds about one row per active key.
 */
export function createRateLimitsService({ db }: Pick<ServiceDeps, 'db'>) {
  let droppedBefore = 0;
  return {
    shared: isPostgres(db),

    async hit(key: string, windowMs: number): Promise<{ hits: number; resetAt: Date }> {
      const { hits, resetAt } = await countApiHit(db, sha256(key), windowMs);
      const windowStart = resetAt - windowMs;
      if (windowStart > droppedBefore) {
        droppedBefore = windowStart;
        await dropApiWindowsBefore(db, windowStart);
      }
      return { hits, resetAt: new Date(resetAt) };
    },

    async unhit(key: string): Promise<void> {
      await uncountApiHit(db, sha256(key));
    },

    async reset(key: string): Promise<void> {
      await resetApiHits(db, sha256(key));
    },
  };
}

export type RateLimitsService = ReturnType<typeof createRateLimitsService>;
