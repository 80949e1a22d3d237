import { STATUS_CODES } from 'node:http';
import type { ErrorRequestHandler } from 'express';
import type { Logger } from 'pino';
import { bodyProblem } from '../http/body';

/**
 * For the public pages outside the API and the dashboard (verification links, design
 * previews): an unexpected failure is logged and answered with a short plain 500, never a stack.
 */
export function plainErrorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    // A client's mistake (a link with broken %-escapes, a form that cannot be read): no error to log.
    const status = bodyProblem(err)?.status ?? Number((err as { status?: unknown })?.status);
    if (status >= 400 && status < 500) return void res.status(status).type('text').send(STATUS_CODES[status] ?? 'Bad Request');
    (req.log ?? logger).error({ err }, 'public page failed');
    res.status(500).type('text').send('Something went wrong; please try again in a moment.');
  };
}
