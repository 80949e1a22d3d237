import express,{ RequestHandler } from 'express';
import { guarded, plainMultipartOnly } from '../http/body';
import { checkPermission, Effect, effectOf, Permission, permissionOf } from '../http/permissions';

type Method = 'GET' | 'POST';

/**
 * After the session check: a role the permission does not list gets the 403 page, before the
 * body is read; the request then carries what its route declares it does (ctxOf passes it on).
 */
function permitted(method: Method, path: string, effect: Effect): RequestHandler {
  const permission: Permission = permissionOf('web', method, path, effect);
  return (req, _res, next) => {
    checkPermission(req.actor?.role, permission);
    req.routeScope = { name: `${method} ${path}`, effect, recorded: [] };
    next();
  };
}

/** A route of the dashboard with what it does (the permission and audit tests walk them). */
export interface WebRoute {
  method: Method;
  path: string;
  effect: Effect;
  /** Answered without a session. */
  open: boolean;
}

export interface WebStages {
  /** Security headers of every dashboard response (the CSP the pages are written for). */
  headers: RequestHandler;
  /** Resolves the session cookie or sends the visitor to the sign-in page. */
  auth: RequestHandler;
  /** Parsers of urlencoded form bodies. */
  body: RequestHandler[];
  /** Compares the request's token with the session's. */
  csrf: RequestHandler;
}

/**
 * The dashboard's route table. Every route gets the security headers; private routes get
 * the session check; every state-changing route gets a CSRF check by construction, and is
 * recorded so a test can prove each one refuses a request without its token. Before each
 * route's own (last) handler, refuseControlCharacters checks every field of the query and the
 * body (after onInvalid, so a refused form is shown again with the message under its field).
 * Only these paths are answered here: anything else falls through to the app's other routers.
 */
export class WebRoutes {
  readonly router = express.Router();
  readonly stateChanging: string[] = [];
  /** Every route, as `[method, path]` (the fuzz test walks them). */
  readonly all: ['GET' | 'POST', string][] = [];
  /** The routes answered without a session (the request log test checks their paths). */
  readonly open: ['GET' | 'POST', string][] = [];
  /** Every route with what it does. */
  readonly described: WebRoute[] = [];

  constructor(private readonly stages: WebStages) {}

  get(path: string, ...handlers: RequestHandler[]): void {
    this.record('GET', path, false);
    this.router.get(path, this.stages.headers, this.stages.auth, permitted('GET', path, effectOf('web', 'GET', path)), ...guarded(handlers));
  }

  /** A GET that hands data out of the service (a CSV or JSON download): the read permission, and one audit entry. */
  download(path: string, ...handlers: RequestHandler[]): void {
    this.record('GET', path, false, 'exports');
    this.router.get(path, this.stages.headers, this.stages.auth, permitted('GET', path, 'exports'), ...guarded(handlers));
  }

  post(path: string, ...handlers: RequestHandler[]): void {
    this.stateChanging.push(path);
    this.record('POST', path, false);
    this.router.post(path, this.stages.headers, this.stages.auth, permitted('POST', path, effectOf('web', 'POST', path)), ...this.stages.body, this.stages.csrf, ...guarded(handlers));
  }

  /** A POST whose first handler parses its own multipart body (a file upload). */
  upload(path: string, parser: RequestHandler, ...handlers: RequestHandler[]): void {
    this.stateChanging.push(path);
    this.record('POST', path, false);
    this.router.post(path, this.stages.headers, this.stages.auth, permitted('POST', path, 'changes'), plainMultipartOnly, parser, this.stages.csrf, ...guarded(handlers));
  }

  /** A page anyone may see (the sign-in form). */
  publicGet(path: string, ...handlers: RequestHandler[]): void {
    this.record('GET', path, true);
    this.open.push(['GET', path]);
    this.router.get(path, this.stages.headers, ...guarded(handlers));
  }

  /** A public form post: it must bring its own CSRF check, there being no session yet. */
  publicPost(path: string, csrf: RequestHandler, ...handlers: RequestHandler[]): void {
    this.stateChanging.push(path);
    this.record('POST', path, true);
    this.open.push(['POST', path]);
    this.router.post(path, this.stages.headers, ...this.stages.body, csrf, ...guarded(handlers));
  }

  private record(method: Method, path: string, open: boolean, declared?: Effect): void {
    this.all.push([method, path]);
    this.described.push({ method, path, effect: effectOf('web', method, path, declared), open });
  }
}
