import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { inTurn } from '../http/in-turn';
import { sendFailure } from '../lib/envelope';
import { API_PREFIX } from '../lib/paths';
import type { ApiRoutes, RouteHandlers } from './routes';

/**
 * The API's routes found by one Map lookup on method and path, run ahead of the app's routers.
 * Express would walk the app's middleware, the public routers mounted at /api/v1, the guard,
 * then match some 150 routes one by one (a fifth of a small request's CPU). Only a request
 * spelled exactly as a route was registered (GET, POST or DELETE; `/api/v1` and the path in
 * their registered case, no trailing slash) takes this way, and it runs what the routers
 * would: the route's public handlers, or the rate limit, the key check and the route's
 * handlers, with errors answered by the API's error handler. Everything else (HEAD, OPTIONS,
 * a wrong method, `/contacts-type/`, `/API/V1/…`) goes on through the routers as before, so
 * 404 and 405 answers are theirs.
 */
export function apiDispatch(routes: ApiRoutes, beforeKeyedRoutes: readonly RequestHandler[], onError: ErrorRequestHandler): RequestHandler {
  const prefixLength = API_PREFIX.length;
  /** Each route's whole chain, made on its first request. */
  const chains = new Map<RouteHandlers, RequestHandler>();
  return (req: Request, res: Response, next: NextFunction) => {
    const url = req.url;
    if (url.charCodeAt(prefixLength) !== 47 /* / */ || !url.startsWith(API_PREFIX)) return next();
    const query = url.indexOf('?', prefixLength);
    const route = routes.lookup(req.method, query < 0 ? url.slice(prefixLength) : url.slice(prefixLength, query));
    if (!route) return next();
    // As inside the API router mounted at /api/v1.
    req.baseUrl = API_PREFIX;
    req.url = url.slice(prefixLength);
    req.params = {};
    const leave = (err: unknown) => {
      req.baseUrl = '';
      req.url = url;
      next(err);
    };
    let chain = chains.get(route);
    if (!chain) chains.set(route, (chain = inTurn(...(route.public ? route.handlers : [...beforeKeyedRoutes, ...route.handlers]))));
    chain(req, res, (err?: unknown) => {
      // The end of the chain, or 'route' leaving it (no other route of the API has the same
      // path): the API router's 404 follows. (No handler uses 'route' or 'router'.)
      if (!err || err === 'route' || err === 'router') return sendFailure(res, 404, 'Not Found');
      onError(err, req, res, leave);
    });
  };
}
