import compression from 'compression';
import type { RequestHandler } from 'express';
// Both ship without types; they are what compression itself uses.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const onHeaders = require('on-headers') as (res: unknown, listener: () => void) => void;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const vary = require('vary') as (res: unknown, field: string) => void;

/** compression's own test of Cache-Control. */
const NO_TRANSFORM = /(?:^|,)\s*?no-transform\s*?(?:,|$)/i;

/**
 * compression(), for requests that accept an encoding. A request without Accept-Encoding is
 * never compressed, yet compression() would wrap the response's write, end and listeners, and
 * negotiate, on every request: such a request only gets what compression() would have left on
 * it, `Vary: Accept-Encoding` on a compressible answer that allows transforms.
 */
export function compressWhenAccepted(): RequestHandler {
  const compress = compression();
  return (req, res, next) => {
    if (req.headers['accept-encoding'] !== undefined) return compress(req, res, next);
    onHeaders(res, () => {
      const cacheControl = res.getHeader('Cache-Control');
      if (compression.filter(req, res) && (!cacheControl || !NO_TRANSFORM.test(String(cacheControl)))) vary(res, 'Accept-Encoding');
    });
    next();
  };
}
