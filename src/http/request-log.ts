import { randomUUID } from 'node:crypto';
import type { Express, NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';

declare module 'http' {
  interface IncomingMessage {
    /** The request id, also answered in `X-Request-Id`. */
    id: string;
    /** A logger bound to this request (built on first use). */
    log: Logger;
  }
}

const REQUEST_ID = /^[\w.-]{1,128}$/;

/** Path segments that are credentials (verification, unsubscribe, open and click tracking, preview links). */
const TOKEN_PATH = /^((?:\/api\/v1)?\/(?:verify-sender|unsubscribe|one-click|open|c|preview\/schedule)\/)[^/?]+/;

/** Keeps secrets in links out of the logs. */
export function redactTokens(url: string | undefined): string | undefined {
  return url?.replace(TOKEN_PATH, '$1[redacted]');
}

const requestFields = (req: Request) => ({ id: req.id, method: req.method, url: redactTokens(req.originalUrl) });

/**
 * One JSON line per request (pino), `info`, or `error` for a 5xx, with the request id that is
 * also answered in `X-Request-Id`. At a level that would drop the line nothing is formatted:
 * a request costs an id and, unless the logger is silent, one `finish` listener; `req.log`
 * (a child logger for errors) is built only when something logs through it.
 */
export function requestLog(app: Express, logger: Logger): (req: Request, res: Response, next: NextFunction) => void {
  Object.defineProperty(app.request, 'log', {
    configurable: true,
    get(this: Request & { _log?: Logger }) {
      return (this._log ??= logger.child({ req: requestFields(this) }));
    },
  });
  const silent = !logger.isLevelEnabled('error');
  return (req, res, next) => {
    const incoming = req.headers['x-request-id'];
    req.id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('X-Request-Id', req.id);
    if (!silent) {
      const start = performance.now();
      res.once('finish', () => {
        const level = res.statusCode >= 500 ? 'error' : 'info';
        if (!logger.isLevelEnabled(level)) return;
        logger[level](
          { req: requestFields(req), res: { statusCode: res.statusCode }, responseTime: Math.round(performance.now() - start) },
          'request completed',
        );
      });
    }
    next();
  };
}
