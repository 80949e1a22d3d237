import express,{ Request,Response,Router } from 'express';
import multer from 'multer';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import type { Logger } from 'pino';
import type { Config } from '../config';
import { plainMultipartOnly } from '../http/body';
import { SIGNUP } from '../lib/constants';
import { createViews } from '../lib/views';
import type { Services } from '../services';
import type { PublicForm } from '../services/audience/signup-forms';
import { plainErrorHandler } from './plain-error';

const HOUR_MS = 3600_000;

/**
 * The public signup form and its confirmation link: no session, no cookies,
 * no script. The form is meant to be posted from other sites too (the dashboard's embeddable
 * snippet), so it cannot carry a CSRF token: a honeypot field and a per-client limit
 * (SIGNUP_RATE_LIMIT submissions an hour, by the client address Express reads under
 * TRUST_PROXY) guard it instead, and nothing happens before the address's owner confirms.
 * The link's GET shows a button and changes nothing (link scanners open links); its POST confirms.
 */
export function createSubscribeRouter({ signups }: Services, config: Config, logger: Logger): Router {
  const views = createViews();
  const router = express.Router();
  const forms = [express.urlencoded({ extended: false, limit: '32kb', parameterLimit: 200 }), plainMultipartOnly, multer({ limits: { fields: 200, files: 0, fieldSize: 4096 } }).none()];
  const clientOf = (req: Request) => req.ip ?? '';

  const send = (res: Response, status: number, template: string, data: Record<string, unknown>) => {
    res.setHeader('Cache-Control', 'no-store');
    res.status(status).type('html').send(views.render(template, data));
  };
  const notFound = (res: Response) => send(res, 404, 'public/not-found.njk', {});
  const formPage = (res: Response, status: number, form: PublicForm, extra: { values?: Record<string, string>; errors?: Record<string, string>; groups?: number[] } = {}) =>
    send(res, status, 'public/subscribe.njk', {
      ...form,
      action: `/subscribe/${form.form.public_id}`,
      honeypot: SIGNUP.honeypot,
      values: extra.values ?? {},
      errors: extra.errors ?? {},
      // A first visit offers every group ticked; a refused form keeps the visitor's ticks.
      chosen: extra.groups ?? form.groups.map((g) => g.id),
    });

  const limit = config.signupRateLimit > 0
    ? [
        rateLimit({
          windowMs: HOUR_MS,
          limit: config.signupRateLimit,
          standardHeaders: 'draft-7',
          legacyHeaders: false,
          keyGenerator: (req) => `signup:${ipKeyGenerator(clientOf(req))}`,
          handler: (_req, res) => send(res, 429, 'public/subscribe-limited.njk', {}),
          validate: false,
        }),
      ]
    : [];

  router.get('/subscribe/:id', async (req, res) => {
    const form = await signups.form(String(req.params.id));
    if (!form) return notFound(res);
    formPage(res, 200, form);
  });

  router.post('/subscribe/:id', ...forms, ...limit, async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const form = await signups.form(String(req.params.id));
    if (!form) return notFound(res);
    // A filled honeypot is a robot: it is answered as a person would be, and nothing is stored or sent.
    const trap = body[SIGNUP.honeypot];
    if (trap !== undefined && trap !== '') return send(res, 200, 'public/subscribe-sent.njk', { email: typeof body.email === 'string' ? body.email : '' });
    const result = await signups.submit(form, body, clientOf(req));
    if (result.kind === 'invalid') return formPage(res, 422, form, result);
    if (result.kind === 'capped') return send(res, 429, 'public/subscribe-limited.njk', { email: result.email });
    send(res, 200, 'public/subscribe-sent.njk', { email: result.email });
  });

  router.get('/subscribe/confirm/:token', async (req, res) => {
    if (req.method === 'HEAD') return void res.status(200).setHeader('Cache-Control', 'no-store').type('html').end();
    const found = await signups.pending(String(req.params.token));
    if (!found) return notFound(res);
    send(res, found.state === 'expired' ? 410 : 200, 'public/subscribe-confirm.njk', { ...found });
  });

  router.post('/subscribe/confirm/:token', ...forms, async (req, res) => {
    const done = await signups.confirm(String(req.params.token), clientOf(req));
    if (!done) return notFound(res);
    send(res, done.state === 'expired' ? 410 : 200, 'public/subscribe-confirm.njk', { ...done });
  });

  router.use(plainErrorHandler(logger));
  return router;
}
