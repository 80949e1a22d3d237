import type { Request, RequestHandler } from 'express';
import multer from 'multer';
import { FieldErrors, ValidationError } from '../lib/errors';
import { hasControlCharacters, messages } from '../lib/validation';

/**
 * Reading a request body safely, for both faces: what a parser's failure means to the
 * client (status and envelope errors), multipart bodies that claim an encoding, and one
 * last check that no text of the body or query holds control characters.
 */

/** A parser's refusal as the client sees it: the status and the envelope's `errors`. */
export interface BodyProblem {
  status: number;
  errors: FieldErrors | string;
}

export const BODY_MESSAGES = {
  tooLarge: 'The request body is too large.',
  uploadTooLarge: 'The uploaded content is too large.',
  tooMany: 'The request has too many parameters.',
  unreadable: 'The request body could not be read: it does not match its Content-Encoding.',
  encoding: 'The body encoding is not supported.',
  json: 'The body must be valid JSON.',
  nested: 'The body is nested too deeply.',
  multipart: 'The multipart body is malformed.',
  controlKey: 'The body field names must not contain control characters.',
} as const;

/** How deep a JSON body may nest: as deep as urlencoded keys may (body-parser's default depth). */
export const MAX_BODY_DEPTH = 32;

interface ParserError {
  type?: unknown;
  status?: unknown;
  message?: unknown;
}

/**
 * Maps the failures of express.json/urlencoded (body-parser), of multer and busboy, and of a
 * body whose Content-Encoding lies (zlib fails while inflating) to a 4xx. Undefined for any
 * other error, which stays a 500.
 */
export function bodyProblem(err: unknown): BodyProblem | undefined {
  if (err instanceof multer.MulterError) {
    switch (err.code as string) {
      case 'LIMIT_FILE_SIZE':
      case 'LIMIT_FIELD_VALUE':
        return { status: 413, errors: BODY_MESSAGES.uploadTooLarge };
      case 'LIMIT_FIELD_COUNT':
      case 'LIMIT_PART_COUNT':
        return { status: 413, errors: BODY_MESSAGES.tooMany };
      case 'LIMIT_FIELD_NESTING':
        return { status: 422, errors: { body: [BODY_MESSAGES.nested] } };
    }
    const field = err.field ?? 'file';
    return { status: 422, errors: { [field]: [`The ${field.replace(/_/g, ' ')} field is not accepted here.`] } };
  }
  const e = (err ?? {}) as ParserError;
  switch (e.type) {
    case 'entity.too.large':
      return { status: 413, errors: BODY_MESSAGES.tooLarge };
    case 'parameters.too.many':
      return { status: 413, errors: BODY_MESSAGES.tooMany };
    case 'entity.parse.failed':
      return { status: 422, errors: { body: [BODY_MESSAGES.json] } };
    case 'querystring.parse.rangeError':
      return { status: 422, errors: { body: [BODY_MESSAGES.nested] } };
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return { status: 415, errors: BODY_MESSAGES.encoding };
  }
  const message = typeof e.message === 'string' ? e.message : '';
  if (message === 'Malformed part header' || message === 'Unexpected end of form' || /^Multipart/.test(message)) {
    return { status: 422, errors: { body: [BODY_MESSAGES.multipart] } };
  }
  // body-parser wraps what went wrong while reading (a gzip body that is not gzip, an
  // aborted upload) in an http-errors 400; nothing of it is the server's fault.
  if (e.status === 400) return { status: 400, errors: BODY_MESSAGES.unreadable };
  return undefined;
}

/**
 * A body no parser read (text/plain, JSON sent to a form, no body at all) is an empty form, so
 * routes read missing fields (a 422) instead of failing on `req.body` being undefined.
 */
export const formObject: RequestHandler = (req, _res, next) => {
  if (req.body === undefined || req.body === null || typeof req.body !== 'object') req.body = {};
  next();
};

/**
 * multer reads multipart bodies as they come and ignores Content-Encoding, so a compressed
 * (or falsely labelled) multipart body would be parsed as garbage or, worse, accepted: it is
 * refused as an encoding this service does not read (415), like body-parser refuses unknown ones.
 */
export const plainMultipartOnly: RequestHandler = (req, _res, next) => {
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding !== 'identity' && req.is('multipart')) {
    return next(Object.assign(new Error('content encoding unsupported'), { status: 415, type: 'encoding.unsupported' }));
  }
  next();
};

type Problem = { kind: 'control'; field: string } | { kind: 'key' } | { kind: 'depth' };

/**
 * The first problem in a field's value (nested objects and arrays, their keys too), walked
 * without recursion so a deeply nested body cannot exhaust the stack. A text inside an object
 * is named by its key (`custom_field[age]`), one inside an array by the array's name.
 */
function firstProblem(name: string, value: unknown): Problem | undefined {
  const stack: [unknown, number, string][] = [[value, 0, name]];
  while (stack.length > 0) {
    const [current, depth, path] = stack.pop()!;
    if (typeof current === 'string') {
      if (hasControlCharacters(current)) return { kind: 'control', field: path };
    } else if (current !== null && typeof current === 'object') {
      if (depth >= MAX_BODY_DEPTH) return { kind: 'depth' };
      const isArray = Array.isArray(current);
      for (const [key, inner] of Object.entries(current)) {
        if (hasControlCharacters(key)) return { kind: 'key' };
        stack.push([inner, depth + 1, isArray ? path : `${path}[${key}]`]);
      }
    }
  }
  return undefined;
}

function problemsOf(source: unknown, errors: FieldErrors): void {
  if (source === null || typeof source !== 'object') return;
  for (const [name, value] of Object.entries(source)) {
    const problem = hasControlCharacters(name) ? ({ kind: 'key' } as const) : firstProblem(name, value);
    if (problem?.kind === 'control') errors[problem.field] ??= [messages.control(problem.field)];
    else if (problem?.kind === 'key') errors.body = [BODY_MESSAGES.controlKey];
    else if (problem?.kind === 'depth') errors.body = [BODY_MESSAGES.nested];
  }
}

/**
 * The last word before a route's own handler: a control character (NUL and the other C0
 * characters but TAB, CR and LF) in any field of the query or the body is a 422 naming the
 * field, whether or not the route has a rule for it, so none reaches the database (PostgreSQL
 * refuses NUL in text). Fields with rules get the same message from `field()` earlier, beside
 * their other messages.
 */
export const refuseControlCharacters: RequestHandler = (req: Request, _res, next) => {
  const errors: FieldErrors = {};
  problemsOf(req.query, errors);
  problemsOf(req.body, errors);
  if (Object.keys(errors).length > 0) return next(new ValidationError(errors));
  next();
};

/** The route's handlers with refuseControlCharacters before the last one (the route's own). */
export function guarded(handlers: RequestHandler[]): RequestHandler[] {
  if (handlers.length === 0) return handlers;
  return [...handlers.slice(0, -1), refuseControlCharacters, handlers[handlers.length - 1]];
}
