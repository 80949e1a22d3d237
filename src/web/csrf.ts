import type { Request, RequestHandler, Response } from 'express';
import { safeEqual } from '../lib/crypto';
import { AppError } from '../lib/errors';

/** 403: a state-changing request without the token of the page it came from. */
export class CsrfError extends AppError {
  readonly status = 403;
  constructor() {
    super('This form has expired or did not come from this site. Reload the page and try again.');
  }
}

export const CSRF_HEADER = 'X-CSRF-Token';
export const CSRF_FIELD = '_csrf';

/**
 * Synchronizer token check: htmx sends the token as a header (public/assets/app.js reads it
 * from the page's meta tag), plain forms as a hidden field. Runs after the body is parsed.
 */
export function verifyCsrf(expected: (req: Request, res: Response) => string | undefined): RequestHandler {
  return (req, res, next) => {
    const sent = req.get(CSRF_HEADER) ?? (req.body as Record<string, unknown> | undefined)?.[CSRF_FIELD];
    const wanted = expected(req, res);
    if (typeof sent !== 'string' || !wanted || !safeEqual(sent, wanted)) throw new CsrfError();
    next();
  };
}
