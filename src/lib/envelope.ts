import type { Response } from 'express';
import type { FieldErrors } from './errors';

/** `{ status: 'success', message }`: message is a collection/record object or a constant string. */
export function sendSuccess(res: Response, message: unknown): void {
  sendJson(res, 200, { status: 'success', message });
}

/**
 * The reference's odd success: segment, contact type and sender delete put their constant
 * string under `errors` while `status` is 'success'.
 */
export function sendSuccessUnderErrors(res: Response, text: string): void {
  sendJson(res, 200, { status: 'success', errors: text });
}

export function sendFailure(res: Response, status: number, errors: FieldErrors | string): void {
  sendJson(res, status, { status: 'failed', errors });
}

/** A failure whose sentence is under `message` (see MessageConflictError). */
export function sendFailedMessage(res: Response, status: number, message: string): void {
  sendJson(res, status, { status: 'failed', message });
}

/**
 * `res.status(status).json(body)`, with the same headers in the same order (Content-Type,
 * Content-Length, the weak ETag of the app's `etag fn`), the document serialised once into one
 * Buffer: Express turns it into a string, looks the type up, re-parses it for a charset, then
 * makes the Buffer. A conditional request (If-None-Match, If-Modified-Since, which may be
 * answered 304), HEAD, or a response that already has a type or an ETag goes through Express.
 * (The app sets no `json replacer`, `json spaces` or `json escape`.)
 */
function sendJson(res: Response, status: number, body: object): void {
  const req = res.req;
  const etagOf = res.app.get('etag fn') as ((body: Buffer) => string | undefined) | undefined;
  if (
    typeof etagOf !== 'function' ||
    req.method === 'HEAD' ||
    req.headers['if-none-match'] !== undefined ||
    req.headers['if-modified-since'] !== undefined ||
    res.hasHeader('Content-Type') ||
    res.hasHeader('ETag') ||
    res.hasHeader('Transfer-Encoding')
  ) {
    res.status(status).json(body);
    return;
  }
  const bytes = Buffer.from(JSON.stringify(body));
  res.status(status);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', String(bytes.length));
  const etag = etagOf(bytes);
  if (etag) res.setHeader('ETag', etag);
  res.end(bytes);
}
