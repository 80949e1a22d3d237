import express,{ Router } from 'express';
import type { Logger } from 'pino';
import type { Services } from '../services';
import { plainErrorHandler } from './plain-error';

/**
 * `GET /preview/schedule/<utr>`: a schedule's design rendered as a page (its `design_url`).
 * Public so the dashboard and API clients can show it in an img-less preview or iframe; the
 * schedule's utr (a random UUID) is the key, so designs cannot be enumerated.
 * The HTML is the account's own content: it is served sandboxed, without scripts, so it
 * cannot act on this origin.
 */
export function schedulePreviewRouter({ automationSchedules }: Services, logger: Logger): Router {
  const router = express.Router();
  router.get('/preview/schedule/:utr', async (req, res) => {
    const html = await automationSchedules.designHtml(req.params.utr);
    res.set({
      'Content-Security-Policy': "sandbox; default-src 'none'; img-src http: https: data:; style-src 'unsafe-inline' http: https:; font-src http: https: data:; frame-ancestors 'self'",
      'Cache-Control': 'private, no-cache',
      'X-Robots-Tag': 'noindex',
    });
    if (html === undefined) return void res.status(404).type('text').send('Not Found');
    res.status(200).type('html').send(html);
  });
  router.use(plainErrorHandler(logger));
  return router;
}
