import type { Response } from 'express';
import type { FieldErrors } from './errors';

/** `{ status: 'success', message }`: message is a collection/record object or a constant string. */
export function sendSuccess(res: Response, message: unknown): void {
  res.status(200).json({ status: 'success', message });
}

/**
 * The reference's odd success: segment, contact type and sender delete put their constant
 * string under `errors` while `status` is 'success'.
 */
export function sendSuccessUnderErrors(res: Response, text: string): void {
  res.status(200).json({ status: 'success', errors: text });
}

export function sendFailure(res: Response, status: number, errors: FieldErrors | string): void {
  res.status(status).json({ status: 'failed', errors });
}
