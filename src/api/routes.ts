import express,{ NextFunction,Request,RequestHandler,Response } from 'express';
import multer from 'multer';
import type { Config } from '../config';
import { formObject, guarded, plainMultipartOnly } from '../http/body';
import { sendFailure } from '../lib/envelope';

type Method = 'GET' | 'POST' | 'DELETE';

/**
 * The JSON API's route table. It records each path's methods, so one middleware can answer
 * 404 "Not Found" for unknown paths and 405 with `Allow` for a known path and a wrong method
 * before anything else runs. POST routes parse JSON, urlencoded (`strIds[0]` → array) and
 * multipart fields; upload routes bring their own multipart parser instead. Before each route's
 * own (last) handler, refuseControlCharacters checks every field of the query and the body.
 */
export class ApiRoutes {
  readonly router = express.Router();
  private readonly methods = new Map<string, Set<Method>>();
  private readonly formBody: RequestHandler[];

  constructor(config: Pick<Config, 'maxBodyBytes'>) {
    this.formBody = [
      express.json({ limit: config.maxBodyBytes }),
      express.urlencoded({ extended: true, limit: config.maxBodyBytes, parameterLimit: 20000 }),
      plainMultipartOnly,
      multer({ limits: { fieldSize: config.maxBodyBytes, fields: 20000, files: 0 } }).none(),
      formObject,
    ];
  }

  get(path: string, ...handlers: RequestHandler[]): void {
    this.record('GET', path);
    this.router.get(path, ...guarded(handlers));
  }

  post(path: string, ...handlers: RequestHandler[]): void {
    this.record('POST', path);
    this.router.post(path, ...this.formBody, ...guarded(handlers));
  }

  /** A POST whose first handler parses its own multipart body (a file upload). */
  upload(path: string, parser: RequestHandler, ...handlers: RequestHandler[]): void {
    this.record('POST', path);
    this.router.post(path, plainMultipartOnly, parser, ...guarded(handlers));
  }

  delete(path: string, ...handlers: RequestHandler[]): void {
    this.record('DELETE', path);
    this.router.delete(path, ...guarded(handlers));
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

  private record(method: Method, path: string): void {
    const set = this.methods.get(path) ?? new Set<Method>();
    set.add(method);
    this.methods.set(path, set);
  }
}
