import express,{ RequestHandler } from 'express';

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
 * recorded so a test can prove each one refuses a request without its token. Only these
 * paths are answered here: anything else falls through to the app's other routers.
 */
export class WebRoutes {
  readonly router = express.Router();
  readonly stateChanging: string[] = [];

  constructor(private readonly stages: WebStages) {}

  get(path: string, ...handlers: RequestHandler[]): void {
    this.router.get(path, this.stages.headers, this.stages.auth, ...handlers);
  }

  post(path: string, ...handlers: RequestHandler[]): void {
    this.stateChanging.push(path);
    this.router.post(path, this.stages.headers, this.stages.auth, ...this.stages.body, this.stages.csrf, ...handlers);
  }

  /** A POST whose first handler parses its own multipart body (a file upload). */
  upload(path: string, parser: RequestHandler, ...handlers: RequestHandler[]): void {
    this.stateChanging.push(path);
    this.router.post(path, this.stages.headers, this.stages.auth, parser, this.stages.csrf, ...handlers);
  }

  /** A page anyone may see (the sign-in form). */
  publicGet(path: string, ...handlers: RequestHandler[]): void {
    this.router.get(path, this.stages.headers, ...handlers);
  }

  /** A public form post: it must bring its own CSRF check, there being no session yet. */
  publicPost(path: string, csrf: RequestHandler, ...handlers: RequestHandler[]): void {
    this.stateChanging.push(path);
    this.router.post(path, this.stages.headers, ...this.stages.body, csrf, ...handlers);
  }
}
