import express,{ Router } from 'express';
import type { Logger } from 'pino';
import type { Services } from '../services';
import { plainErrorHandler } from './plain-error';

/** The smallest transparent GIF (1×1). */
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/**
 * The open pixel and tracked links. A valid token counts the open and gets the GIF; a failure to record still
 * gets the GIF (the reader's mail must not show a broken image); a forged token is a 404.
 */
export function createTrackingRouter({ tracking }: Services, logger: Logger): Router {
  const router = express.Router();
  router.get('/open/:file', async (req, res) => {
    const match = /^(.+)\.gif$/.exec(String(req.params.file));
    let known = false;
    if (match) {
      try {
        known = await tracking.recordOpen(match[1], { userAgent: req.get('user-agent'), at: new Date() });
      } catch (err) {
        logger.error({ err }, 'recording an open failed');
        known = true;
      }
    }
    if (!known) return res.status(404).type('text/plain').send('Not Found');
    res.set({
      'Content-Type': 'image/gif',
      'Cache-Control': 'no-store, no-cache, must-revalidate, private',
      // Mail clients load it from other origins.
      'Cross-Origin-Resource-Policy': 'cross-origin',
    });
    res.send(PIXEL);
  });

  /**
   * A tracked link: 302 to the URL stored for link n of the message's send, never to one taken
   * from the request (no open redirect). A forged token or an unknown n is a 404. HEAD (link
   * checkers) follows the same answer without counting. A failure to record still redirects.
   */
  router.get('/c/:token/:n', async (req, res) => {
    const token = String(req.params.token);
    const n = /^[1-9]\d{0,9}$/.test(String(req.params.n)) ? Number(req.params.n) : 0;
    let url: string | undefined;
    if (n && req.method === 'HEAD') {
      url = await tracking.linkUrl(token, n);
    } else if (n) {
      try {
        url = await tracking.recordClick(token, n, { userAgent: req.get('user-agent'), at: new Date() });
      } catch (err) {
        logger.error({ err }, 'recording a click failed');
        url = await tracking.linkUrl(token, n);
      }
    }
    if (!url) return res.status(404).type('text/plain').send('Not Found');
    res.set({ 'Cache-Control': 'no-store, private', 'Referrer-Policy': 'no-referrer' });
    res.redirect(302, url);
  });

  router.use(plainErrorHandler(logger));
  return router;
}
