import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Middleware run one after the other as one layer of the app: what every request goes
 * through first (request id and log, headers, compression, the API's lookup) without Express
 * matching, trimming and wrapping a layer for each. Each calls `next()` to go on; an error
 * leaves the whole group, as it would leave the remaining layers.
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
        handler(req, res, next);
      } catch (error) {
        done(error);
      }
    };
    next();
  };
}
