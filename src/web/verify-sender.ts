import express,{ Router } from 'express';
import type { Logger } from 'pino';
import { createViews } from '../lib/views';
import type { Services } from '../services';
import { plainErrorHandler } from './plain-error';

/**
 * `GET /verify-sender/<token>`: the link of a sender's verification mail. It verifies the
 * sender once and shows a small page; an unknown or used token shows a 404 page and
 * changes nothing. HEAD (sent by some link scanners) never verifies.
 */
export function verifySenderRouter({ senders }: Services, logger: Logger): Router {
  const views = createViews();
  const router = express.Router();

  router.get('/verify-sender/:token', async (req, res) => {
    res.set('Cache-Control', 'no-store');
    if (req.method === 'HEAD') return void res.status(200).type('html').end();
    const sender = await senders.verify(req.params.token);
    res.status(sender ? 200 : 404).type('html').send(views.render('public/verify-sender.njk', { sender }));
  });

  router.use(plainErrorHandler(logger));
  return router;
}
