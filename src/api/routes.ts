import express,{ NextFunction,Request,RequestHandler,Response } from 'express';
import multer from 'multer';
import type { Config } from '../config';
import { formObject, guarded, plainMultipartOnly } from '../http/body';
import type { ParamDoc } from '../http/param-doc';
import { checkPermission, Effect, effectOf, Permission, permissionOf } from '../http/permissions';
import { refuseMisshapen, rulesOf } from '../http/validation';
import { sendFailure } from '../lib/envelope';
import type { SuccessDoc } from './describe';

type Method = 'GET' | 'POST' | 'DELETE';

/**
 * What the OpenAPI document says of a route, declared where the route is registered. The
 * parameters of its `validate(...)` rules are read from the handlers; `params` adds the ones a
 * handler reads without a rule (paging, `strIds`, an upload's fields).
 */
export interface RouteDoc {
  summary: string;
  /** The success answer (200), made with the helpers of ./describe (`says`, `holds`, `lists`, …). */
  response: SuccessDoc;
  description?: string;
  params?: readonly ParamDoc[];
  /** Answers without API keys (the document itself); every other route needs them. */
  public?: boolean;
  /**
   * What the route does when its method does not say it: a GET that `changes` something (the
   * write permission, one audit entry) or `exports` data (the read permission, one audit entry).
   */
  effect?: Effect;
  /** Answers beyond the usual ones, by status (made with ./describe's `failsWith`). */
  failures?: Record<string, SuccessDoc>;
}

/** A registered route as the document describes it. */
export interface DescribedRoute {
  method: Method;
  path: string;
  tag?: string;
  doc: RouteDoc;
  /** The rules' parameters, then `doc.params`. */
  params: ParamDoc[];
  /** A file upload: its body is multipart only. */
  upload: boolean;
  /** Who may call it (src/http/permissions.ts); public routes need no key and have none. */
  permission?: Permission;
  /** What it does: as declared (`doc.effect`), else as its method says. */
  effect: Effect;
}

/**
 * The first handler of every keyed route: a role the permission does not list is a 403 before
 * the body is read; the request then carries what its route declares it does (ctxOf passes it on).
 */
function permitted(name: string, permission: Permission, effect: Effect): RequestHandler {
  return (req, _res, next) => {
    checkPermission(req.actor?.role, permission);
    req.routeScope = { name, effect, recorded: [] };
    next();
  };
}

/**
 * The handlers after the shape check of the parameters the route reads without a rule (rules
 * check their own): an object where one value belongs is a 422 before anything reads it.
 */
function shaped(doc: RouteDoc, handlers: RequestHandler[]): RequestHandler[] {
  if (!doc?.params?.length || handlers.length === 0) return handlers;
  return [refuseMisshapen(doc.params), ...handlers];
}

/**
 * The JSON API's route table. It records each path's methods, so one middleware can answer
 * 404 "Not Found" for unknown paths and 405 with `Allow` for a known path and a wrong method
 * before anything else runs. POST routes parse JSON, urlencoded (`strIds[0]` → array) and
 * multipart fields; upload routes bring their own multipart parser instead. Before each route's
 * own (last) handler, refuseControlCharacters checks every field of the query and the body.
 * Every route is registered with its RouteDoc, from which GET /openapi.json is generated.
 */
export class ApiRoutes {
  readonly router = express.Router();
  /** Routes answered before the key check (see RouteDoc.public). */
  readonly publicRouter = express.Router();
  private readonly methods = new Map<string, Set<Method>>();
  private readonly described: DescribedRoute[] = [];
  private readonly formBody: RequestHandler[];
  private tag?: string;

  constructor(config: Pick<Config, 'maxBodyBytes'>) {
    this.formBody = [
      express.json({ limit: config.maxBodyBytes }),
      express.urlencoded({ extended: true, limit: config.maxBodyBytes, parameterLimit: 20000 }),
      plainMultipartOnly,
      multer({ limits: { fieldSize: config.maxBodyBytes, fields: 20000, files: 0 } }).none(),
      formObject,
    ];
  }

  /**
   * The same table, listing the routes registered through it under `tag` in the document (one
   * tag per resource). It shares everything else with this one, so it is made as a child object.
   */
  tagged(tag: string): ApiRoutes {
    return Object.assign(Object.create(this) as ApiRoutes, { tag });
  }

  get(path: string, doc: RouteDoc, ...handlers: RequestHandler[]): void {
    this.record('GET', path, doc, handlers, false);
    this.mount('GET', path, doc, guarded(shaped(doc, handlers)));
  }

  post(path: string, doc: RouteDoc, ...handlers: RequestHandler[]): void {
    this.record('POST', path, doc, handlers, false);
    this.mount('POST', path, doc, [...this.formBody, ...guarded(shaped(doc, handlers))]);
  }

  /** A POST whose first handler parses its own multipart body (a file upload). */
  upload(path: string, doc: RouteDoc, parser: RequestHandler, ...handlers: RequestHandler[]): void {
    this.record('POST', path, doc, handlers, true);
    this.mount('POST', path, doc, [plainMultipartOnly, parser, ...guarded(shaped(doc, handlers))]);
  }

  delete(path: string, doc: RouteDoc, ...handlers: RequestHandler[]): void {
    this.record('DELETE', path, doc, handlers, false);
    this.mount('DELETE', path, doc, guarded(shaped(doc, handlers)));
  }

  /** Answers unknown paths (404) and wrong methods (405 with Allow) before authentication. */
  readonly guard: RequestHandler = (req: Request, res: Response, next: NextFunction) => {
    const path = req.path.length > 1 ? req.path.replace(/\/+$/, '') : req.path;
    const allowed = this.methods.get(path);
    if (!allowed) return sendFailure(res, 404, 'Not Found');
    const method = req.method === 'HEAD' ? 'GET' : (req.method as Method);
    if (req.method === 'OPTIONS' || !allowed.has(method)) {
      const allow: string[] = [...allowed];
      if (allowed.has('GET')) allow.push('HEAD');
      res.setHeader('Allow', allow.join(', '));
      if (req.method === 'OPTIONS') return void res.status(204).end();
      return sendFailure(res, 405, 'Method Not Allowed');
    }
    next();
  };

  /** Every route of the table, as `[method, path]` (the fuzz test walks them). */
  list(): [Method, string][] {
    return [...this.methods].flatMap(([path, methods]) => [...methods].map((method): [Method, string] => [method, path]));
  }

  /** Every route with its description, in the order registered (the OpenAPI document's source). */
  routes(): readonly DescribedRoute[] {
    return this.described;
  }

  private mount(method: Method, path: string, doc: RouteDoc, routeHandlers: RequestHandler[]): void {
    const router = doc.public ? this.publicRouter : this.router;
    const effect = effectOf('api', method, path, doc.effect);
    const handlers = doc.public ? routeHandlers : [permitted(`${method} ${path}`, permissionOf('api', method, path, effect), effect), ...routeHandlers];
    if (method === 'GET') router.get(path, ...handlers);
    else if (method === 'POST') router.post(path, ...handlers);
    else router.delete(path, ...handlers);
  }

  private record(method: Method, path: string, doc: RouteDoc, handlers: RequestHandler[], upload: boolean): void {
    // The type requires the description; this names the route for callers the compiler did not see.
    if (!doc || typeof doc.summary !== 'string' || !doc.summary || !doc.response) {
      throw new Error(`${method} ${path} is registered without its description: pass { summary, response } (DEVELOPERS.md, "Describing an API route").`);
    }
    const set = this.methods.get(path) ?? new Set<Method>();
    set.add(method);
    this.methods.set(path, set);
    const params = [...handlers.flatMap((h) => rulesOf(h).map((rule) => rule.doc)), ...(doc.params ?? [])];
    const effect = effectOf('api', method, path, doc.effect);
    const permission = doc.public ? undefined : permissionOf('api', method, path, effect);
    this.described.push({ method, path, tag: this.tag, doc, params, upload, permission, effect });
  }
}
