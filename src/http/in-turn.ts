import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Middleware run one after the other as one layer, as an Express route runs its handlers: what
 * every request goes through first (request id and log, headers, compression, the API's
 * lookup), and each API route's chain (src/api/dispatch.ts), without Express matching, trimming
 * and wrapping a layer for each. Each calls `next()` to go on; an error (thrown, passed to
 * `next`, or a rejected promise) leaves the whole group, as it would leave the remaining layers.
 */
export function inTurn(...handlers: RequestHandler[]): RequestHandler {
  return (req: Request, res: Response, done: NextFunction) => {
    let i = 0;
    const next = (err?: unknown): void => {
      if (err) return done(err);
      const handler = handlers[i];
      i += 1;
      if (handler === undefined) return done();
      try {
        const returned = handler(req, res, next) as unknown;
        if (isPromise(returned)) returned.then(undefined, (error: unknown) => done(error || new Error('Rejected promise')));
      } catch (error) {
        done(error);
      }
    };
    next();
  };
}

function isPromise(value: unknown): value is PromiseLike<unknown> {
  return value !== null && typeof value === 'object' && typeof (value as { then?: unknown }).then === 'function';
}
