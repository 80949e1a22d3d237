import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import multer from 'multer';
import { BodyProblem, bodyProblem } from '../http/body';
import type { Logger } from 'pino';
import { AppError, ConflictError, FieldErrors, NotFoundError, ValidationError } from '../lib/errors';
import { shapeOf, PageOptions, Views } from './views';
import { plainErrors } from './plain-messages';

/** What to render when a form's input is refused: its own page again, with the messages. */
interface InvalidForm {
  template: string;
  data: (req: Request, res: Response) => Record<string, unknown> | Promise<Record<string, unknown>>;
  options?: PageOptions;
  /** The route's params: an error handler sees the router's own, not the route's. */
  params: Request['params'];
}

/**
 * Declares the page that shows a form, so that a ValidationError thrown by a validator or a
 * service re-renders it (422) with each message next to its field and the values kept.
 */
export function onInvalid(template: string, data: InvalidForm['data'] = () => ({}), options?: PageOptions): RequestHandler {
  return (req, res, next) => {
    res.locals.invalidForm = { template, data, options, params: req.params } satisfies InvalidForm;
    next();
  };
}

const PROBLEM_TITLES: Record<number, string> = { 400: 'Bad request', 413: 'Too large', 415: 'Bad request', 422: 'Please check the form' };

/** A body the server could not read, said for a person filling in a form. */
function formProblem(err: unknown, problem: BodyProblem): string {
  if (err instanceof multer.MulterError && (err.code === 'LIMIT_FILE_SIZE' || err.code === 'LIMIT_FIELD_VALUE')) return 'The file is too large.';
  if (problem.status === 413) return 'The form is too large.';
  if (problem.status === 400 || problem.status === 415) return 'The form could not be read. Please send it again.';
  return typeof problem.errors === 'string' ? problem.errors : Object.values(problem.errors).flat().join(' ');
}

interface Described {
  status: number;
  title: string;
  message: string;
}

function describe(err: unknown): Described | undefined {
  if (err instanceof NotFoundError) return { status: 404, title: 'Not found', message: 'This record does not exist, or it belongs to another account.' };
  if (err instanceof ConflictError) return { status: 409, title: 'Not possible right now', message: err.message };
  if (err instanceof ValidationError) return { status: 422, title: 'Please check the form', message: Object.values(plainErrors(err.fields)).flat().join(' ') };
  if (err instanceof AppError) return { status: err.status, title: err.status === 403 ? 'Refused' : 'Request refused', message: err.message };
  const problem = bodyProblem(err);
  if (problem) return { status: problem.status, title: PROBLEM_TITLES[problem.status] ?? 'Request refused', message: formProblem(err, problem) };
  return undefined;
}

/**
 * The one place where the dashboard turns typed errors into HTML: a refused form comes back
 * with its messages beside the fields; an error in an in-page action is shown in the flash
 * area; anything else is an error page. Unknown errors are logged and shown as a plain 500.
 */
export function webErrorHandler(views: Views, logger: Logger): ErrorRequestHandler {
  return async (error: unknown, req, res, next) => {
    if (res.headersSent) return next(error);
    let err = error;
    try {
      const form = res.locals.invalidForm as InvalidForm | undefined;
      if (err instanceof ValidationError && form) {
        const errors: FieldErrors = plainErrors(err.fields);
        req.params = form.params;
        try {
          const data = await form.data(req, res);
          const values = { ...(data.values as object | undefined), ...req.body };
          return views.page(req, res, form.template, { ...data, values, errors }, { ...form.options, status: 422 });
        } catch (formError) {
          err = formError; // the form's record went away meanwhile: show that instead
        }
      }
      const described = describe(err) ?? { status: 500, title: 'Something went wrong', message: 'The server could not finish this request. It has been logged.' };
      if (described.status === 500) (req.log ?? logger).error({ err }, 'unhandled error');
      if (shapeOf(req) === 'fragment') {
        // An in-page action failed: say so where messages appear instead of inside the row.
        res.set('HX-Retarget', '#flash');
        res.set('HX-Reswap', 'innerHTML');
        return views.fragment(res, 'partials/flash.njk#flash', { message: described.message, kind: 'error' }, described.status);
      }
      views.page(req, res, 'error.njk', { title: described.title, message: described.message, status: described.status }, { status: described.status });
    } catch (renderError) {
      (req.log ?? logger).error({ err: renderError, cause: err }, 'error page failed');
      res.status(500).type('text').send('Internal Server Error');
    }
  };
}

/** Unknown paths: the app mounts this after every other router. */
export function webNotFound(views: Views): RequestHandler {
  return (req, res) => {
    views.page(req, res, 'error.njk', { title: 'Not found', message: 'There is no page at this address.', status: 404 }, { status: 404 });
  };
}
