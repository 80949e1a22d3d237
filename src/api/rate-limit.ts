import type { RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import { sendFailure } from '../lib/envelope';

/**
 * Per key pair, per process (a fixed window of one minute). With several web processes the
 * effective limit is the per-process limit times the number of processes.
 */
export function apiRateLimit(perMinute: number): RequestHandler {
  if (perMinute <= 0) return (_req, _res, next) => next();
  return rateLimit({
    windowMs: 60_000,
    limit: perMinute,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    keyGenerator: (req) => `pk:${req.get('PublicKey') ?? ''}`,
    handler: (_req, res) => {
      // Retry-After is set by express-rate-limit from the window's reset time.
      sendFailure(res, 429, 'Too Many Requests');
    },
    validate: false,
  });
}
