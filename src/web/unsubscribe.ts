import express,{ Request,Response,Router } from 'express';
import multer from 'multer';
import type { Logger } from 'pino';
import { plainMultipartOnly } from '../http/body';
import { createViews } from '../lib/views';
import type { Services } from '../services';
import { plainErrorHandler } from './plain-error';

/**
 * The recipient's pages, reached from links in messages (no session, no cookies: the signed
 * token in the URL is the authority). GET shows the preference page and changes nothing, so
 * link scanners are harmless; POST applies it. A POST with `List-Unsubscribe=One-Click` (RFC
 * 8058, urlencoded or multipart) unsubscribes at once and answers 200 without a redirect.
 */
export function createUnsubscribeRouter({ preferences: choices }: Services, logger: Logger): Router {
  const views = createViews();
  const router = express.Router();
  const forms = [express.urlencoded({ extended: false, limit: '16kb' }), plainMultipartOnly, multer({ limits: { fields: 200, files: 0, fieldSize: 4096 } }).none()];

  const notFound = (res: Response) => res.status(404).type('html').send(views.render('public/not-found.njk', {}));
  const page = async (req: Request, res: Response, notice?: string) => {
    const preferences = await choices.of(String(req.params.token));
    if (!preferences) return notFound(res);
    res.setHeader('Cache-Control', 'no-store');
    res.type('html').send(views.render('public/unsubscribe.njk', { ...preferences, notice }));
  };

  router.get('/unsubscribe/:token', (req, res) => page(req, res));

  router.post('/unsubscribe/:token', ...forms, async (req, res) => {
    const token = String(req.params.token);
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (body.form !== 'preferences') {
      if (!(await choices.oneClickUnsubscribe(token))) return notFound(res);
      res.setHeader('Cache-Control', 'no-store');
      return res.type('html').send(views.render('public/unsubscribed.njk', {}));
    }
    const groups = ([] as unknown[]).concat(body.groups ?? []).map(Number).filter(Number.isSafeInteger);
    if (!(await choices.apply(token, { subscribedGroupIds: groups, unsubscribeAll: body.unsubscribe_all === '1' }))) {
      return notFound(res);
    }
    await page(req, res, 'Your preferences have been saved.');
  });

  router.use(plainErrorHandler(logger));
  return router;
}
