import express,{ RequestHandler } from 'express';
import { guarded, plainMultipartOnly } from '../http/body';
import { checkPermission, Permission, permissionOf } from '../http/permissions';

/** After the session check: a role the permission does not list gets the 403 page, before the body is read. */
function permitted(method: 'GET' | 'POST', path: string): RequestHandler {
  const permission: Permission = permissionOf('web', method, path);
  return (req, _res, next) => {
    checkPermission(req.actor?.role, permission);
    next();
  };
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

  constructor(private readonly stages: WebStages) {}

  get(path: string, ...handlers: RequestHandler[]): void {
    this.all.push(['GET', path]);
    this.router.get(path, this.stages.headers, this.stages.auth, permitted('GET', path), ...guarded(handlers));
  }

  post(path: string, ...handlers: RequestHandler[]): void {
    this.stateChanging.push(path);
    this.all.push(['POST', path]);
    this.router.post(path, this.stages.headers, this.stages.auth, permitted('POST', path), ...this.stages.body, this.stages.csrf, ...guarded(handlers));
  }

  /** A POST whose first handler parses its own multipart body (a file upload). */
  upload(path: string, parser: RequestHandler, ...handlers: RequestHandler[]): void {
    this.stateChanging.push(path);
    this.all.push(['POST', path]);
    this.router.post(path, this.stages.headers, this.stages.auth, permitted('POST', path), plainMultipartOnly, parser, this.stages.csrf, ...guarded(handlers));
  }

  /** A page anyone may see (the sign-in form). */
  publicGet(path: string, ...handlers: RequestHandler[]): void {
    this.all.push(['GET', path]);
    this.open.push(['GET', path]);
    this.router.get(path, this.stages.headers, ...guarded(handlers));
  }

  /** A public form post: it must bring its own CSRF check, there being no session yet. */
  publicPost(path: string, csrf: RequestHandler, ...handlers: RequestHandler[]): void {
    this.stateChanging.push(path);
    this.all.push(['POST', path]);
    this.open.push(['POST', path]);
    this.router.post(path, this.stages.headers, ...this.stages.body, csrf, ...guarded(handlers));
  }
}
