import type { ErrorRequestHandler } from 'express';
import type { Logger } from 'pino';
import { bodyProblem } from '../http/body';
import { sendFailedMessage, sendFailure } from '../lib/envelope';
import { AppError, MessageConflictError, UnauthorizedError, ValidationError } from '../lib/errors';

/** The one place where errors become the reference's failure envelope and an HTTP status. */
export function apiErrorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.headersSent) return next(err);
    if (err instanceof ValidationError) return sendFailure(res, 422, err.fields);
    if (err instanceof UnauthorizedError) return sendFailure(res, 401, err.errors);
    if (err instanceof MessageConflictError) return sendFailedMessage(res, err.status, err.message);
    if (err instanceof AppError) return sendFailure(res, err.status, err.message);
    const problem = bodyProblem(err);
    if (problem) return sendFailure(res, problem.status, problem.errors);
    (req.log ?? logger).error({ err }, 'unhandled error');
    return sendFailure(res, 500, 'Internal Server Error');
  };
}
