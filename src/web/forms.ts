import type { RequestHandler } from 'express';

/**
 * A textarea of addresses may hold one per line; the shared rule (`addressList`, read with
 * splitAddresses) takes them comma-separated, as the API does.
 */
export function linesToCommas(field: string): RequestHandler {
  return (req, _res, next) => {
    const value = req.body?.[field];
    if (typeof value === 'string') req.body[field] = value.replace(/\r?\n/g, ',');
    next();
  };
}
