import type { ErrorRequestHandler } from 'express';
import multer from 'multer';
import type { Logger } from 'pino';
import { sendFailure } from '../lib/envelope';
import { AppError, UnauthorizedError, ValidationError } from '../lib/errors';

interface BodyParserError extends Error {
  type?: string;
  status?: number;
}

/** The one place where errors become the reference's failure envelope and an HTTP status. */
export function apiErrorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.headersSent) return next(err);
    if (err instanceof ValidationError) return sendFailure(res, 422, err.fields);
    if (err instanceof UnauthorizedError) return sendFailure(res, 401, err.errors);
    if (err instanceof AppError) return sendFailure(res, err.status, err.message);
    if (err instanceof multer.MulterError) {
      if (err.code === 'LIMIT_FILE_SIZE' || err.code === 'LIMIT_FIELD_VALUE') {
        return sendFailure(res, 413, 'The uploaded content is too large.');
      }
      const field = err.field ?? 'file';
      return sendFailure(res, 422, { [field]: [`The ${field.replace(/_/g, ' ')} field is not accepted here.`] });
    }
    const parserError = err as BodyParserError;
    switch (parserError?.type) {
      case 'entity.too.large':
        return sendFailure(res, 413, 'The request body is too large.');
      case 'parameters.too.many':
        return sendFailure(res, 413, 'The request has too many parameters.');
      case 'entity.parse.failed':
        return sendFailure(res, 422, { body: ['The body must be valid JSON.'] });
      case 'encoding.unsupported':
      case 'charset.unsupported':
        return sendFailure(res, 422, { body: ['The body encoding is not supported.'] });
    }
    if (parserError?.message === 'Malformed part header' || parserError?.message === 'Unexpected end of form' || /^Multipart/.test(parserError?.message ?? '')) {
      return sendFailure(res, 422, { body: ['The multipart body is malformed.'] });
    }
    (req.log ?? logger).error({ err }, 'unhandled error');
    return sendFailure(res, 500, 'Internal Server Error');
  };
}
