import type { RequestHandler } from 'express';
import { rateLimit, Store } from 'express-rate-limit';
import { sendFailure } from '../lib/envelope';
import type { RateLimitsService } from '../services/accounts/rate-limits';

const WINDOW_MS = 60_000;

/** express-rate-limit's store over the database's counts, shared by every web process. */
function sharedStore(counts: RateLimitsService): Store {
  return {
    localKeys: false,
    async increment(key) {
      const { hits, resetAt } = await counts.hit(key, WINDOW_MS);
      return { totalHits: hits, resetTime: resetAt };
    },
    decrement: (key) => counts.unhit(key),
    resetKey: (key) => counts.reset(key),
  };
}

/**
 * Per key pair, a fixed window of one minute. On PostgreSQL the window is counted in the
 * database, so the limit holds across every web process; on SQLite each process counts alone.
 */
export function apiRateLimit(perMinute: number, counts: RateLimitsService): RequestHandler {
  if (perMinute <= 0) return (_req, _res, next) => next();
  return rateLimit({
    windowMs: WINDOW_MS,
    limit: perMinute,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    keyGenerator: (req) => `pk:${req.get('PublicKey') ?? ''}`,
    ...(counts.shared ? { store: sharedStore(counts) } : {}),
    handler: (_req, res) => {
      // Retry-After is set by express-rate-limit from the window's reset time.
      sendFailure(res, 429, 'Too Many Requests');
    },
    validate: false,
  });
}
