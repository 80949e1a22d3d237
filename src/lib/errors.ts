/**
 * Typed errors thrown by services and middleware. One API error middleware maps them to
 * the reference's envelope and status codes; the dashboard renders them as HTML.
 */
export type FieldErrors = Record<string, string[]>;

export abstract class AppError extends Error {
  abstract readonly status: number;
}

/** 422: missing or invalid input, every failing field at once. */
export class ValidationError extends AppError {
  readonly status = 422;
  constructor(readonly fields: FieldErrors) {
    super('Validation failed');
  }

  static of(field: string, message: string): ValidationError {
    return new ValidationError({ [field]: [message] });
  }
}

/** 404: a record addressed by id or utr that does not exist in this account. */
export class NotFoundError extends AppError {
  readonly status = 404;
  constructor(message = 'Record Not Found') {
    super(message);
  }
}

/** 409: a business rule refused the request; the message says what to do. */
export class ConflictError extends AppError {
  readonly status = 409;
}

/**
 * 409 whose sentence the answer carries under `message` (`{ status: 'failed', message }`), the
 * shape callers of an Idempotency-Key expect from other mail APIs.
 */
export class MessageConflictError extends ConflictError {}

/** 401: missing keys (field errors) or wrong keys (a string). */
export class UnauthorizedError extends AppError {
  readonly status = 401;
  constructor(readonly errors: FieldErrors | string) {
    super(typeof errors === 'string' ? errors : 'Unauthorized');
  }
}

/** 403: the request's role may not do this; nothing was read or changed. */
export class ForbiddenError extends AppError {
  readonly status = 403;
  constructor(message = 'You do not have permission to do this.') {
    super(message);
  }
}

/** 413: a body or an upload larger than allowed. */
export class PayloadTooLargeError extends AppError {
  readonly status = 413;
}

/** 503: a dependency (the mail server) is unavailable; the message says what to do. */
export class ServiceUnavailableError extends AppError {
  readonly status = 503;
}
