import express,{ Router } from 'express';
import type { Logger } from 'pino';
import type { Services } from '../services';
import { plainErrorHandler } from './plain-error';

/** The smallest transparent GIF (1×1). */
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/**
 * The open pixel. A valid token counts the open and gets the GIF; a failure to record still
 * gets the GIF (the reader's mail must not show a broken image); a forged token is a 404.
 */
export function createTrackingRouter({ tracking }: Services, logger: Logger): Router {
  const router = express.Router();
  router.get('/open/:file', async (req, res) => {
    const match = /^(.+)\.gif$/.exec(String(req.params.file));
    let known = false;
    if (match) {
      try {
        known = await tracking.recordOpen(match[1]);
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
  router.use(plainErrorHandler(logger));
  return router;
}
