import type { ErrorRequestHandler } from 'express';
import type { Logger } from 'pino';

/**
 * For the public pages outside the API and the dashboard (verification links, design
 * previews): an unexpected failure is logged and answered with a short plain 500, never a stack.
 */
export function plainErrorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    (req.log ?? logger).error({ err }, 'public page failed');
    res.status(500).type('text').send('Something went wrong; please try again in a moment.');
  };
}
