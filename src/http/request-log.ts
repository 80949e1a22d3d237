import { randomUUID } from 'node:crypto';
import type { Express, NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { API_PREFIX } from '../lib/paths';

declare module 'http' {
  interface IncomingMessage {
    /** The request id, also answered in `X-Request-Id`. */
    id: string;
    /** A logger bound to this request (built on first use). */
    log: Logger;
  }
}

const REQUEST_ID = /^[\w.-]{1,128}$/;

/**
 * The public routes whose path carries a credential: a signed link's token (sender
 * verification, preference page, open pixel, tracked link, sign-up confirmation) or an
 * unguessable id that opens a page without keys (a schedule's preview). The request log writes
 * each of these path segments as `[redacted]`. A route with a path parameter that is no
 * credential is listed as such in test/unit/log-redaction.test.ts, which checks every public
 * route of the app against this list, so a new token route cannot be logged in clear.
 */
export const TOKEN_ROUTES = [
  '/verify-sender/:token',
  '/unsubscribe/:token',
  '/open/:file',
  '/c/:token/:n',
  '/preview/schedule/:utr',
  '/subscribe/confirm/:token',
  '/view/:token',
  '/invitation/:token',
  '/reset-password/:token',
] as const;

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

/** `<prefix>/<secret>`: what precedes each route's first parameter, also under the API's prefix (the schedule preview is mounted there too). */
const TOKEN_PATH = new RegExp(`^((?:${escape(API_PREFIX)})?(?:${TOKEN_ROUTES.map((route) => escape(route.slice(0, route.indexOf(':')))).join('|')}))[^/?]+`);

/** A query parameter's name, and a value that says nothing about anyone (a page, an id). */
const PLAIN_NAME = /^[\w.[\]%-]{1,64}$/;
const PLAIN_VALUE = /^\d{0,12}$/;

/**
 * Keeps secrets in links out of the logs, and personal data: a query value other than a number
 * (an address in `privacy-export?email=`, a search term) and a path segment with an address in
 * it are written as `[redacted]`.
 */
export function redactTokens(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  const at = url.indexOf('?');
  const path = (at === -1 ? url : url.slice(0, at)).replace(TOKEN_PATH, '$1[redacted]').replace(/[^/]*(?:@|%40)[^/]*/gi, '[redacted]');
  if (at === -1) return path;
  const query = url
    .slice(at + 1)
    .split('&')
    .map((pair) => {
      const [name, value = ''] = pair.split(/=(.*)/s);
      if (!PLAIN_NAME.test(name)) return '[redacted]';
      return PLAIN_VALUE.test(value) ? pair : `${name}=[redacted]`;
    });
  return `${path}?${query.join('&')}`;
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
