import express, { Response, Router } from 'express';
import type { Logger } from 'pino';
import { createViews } from '../lib/views';
import type { Services } from '../services';
import { plainErrorHandler } from './plain-error';

/**
 * A message shown as a page of its own (the web view, an archived send): its HTML is the
 * author's, so it gets no script of any kind (no script-src, and a sandbox without
 * allow-scripts), no forms, and may not be framed. Images, styles and fonts may come from
 * anywhere, as in a mail program; the Referrer-Policy (helmet's no-referrer) keeps the page's
 * address, and its token, from the hosts of those images.
 */
export const PUBLIC_MESSAGE_CSP = [
  "default-src 'none'",
  "style-src 'unsafe-inline' https: http:",
  'img-src https: http: data:',
  'font-src https: http: data:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  'sandbox allow-popups allow-popups-to-escape-sandbox allow-top-navigation-by-user-activation',
].join('; ');

/** Sends a message's HTML as a page under PUBLIC_MESSAGE_CSP. */
export function sendMessagePage(res: Response, html: string, cache: string): void {
  res.set({ 'Content-Security-Policy': PUBLIC_MESSAGE_CSP, 'Cache-Control': cache, 'X-Frame-Options': 'DENY' });
  res.type('html').send(html);
}

/**
 * `((webview_url))`: `/view/<token>` shows the message as its recipient received it. The signed
 * token is the authority (no sign-in); a forged or edited one is a 404, a message whose record
 * retention deleted is a 410. Showing it records nothing: the open pixel is blanked.
 */
export function createWebViewRouter({ webView }: Services, logger: Logger): Router {
  const views = createViews();
  const router = express.Router();

  router.get('/view/:token', async (req, res) => {
    const found = await webView.message(String(req.params.token));
    res.setHeader('X-Robots-Tag', 'noindex');
    if (found === undefined) return void res.status(404).setHeader('Cache-Control', 'no-store').type('html').send(views.render('public/not-found.njk', {}));
    if (found === 'gone') return void res.status(410).setHeader('Cache-Control', 'no-store').type('html').send(views.render('public/message-gone.njk', {}));
    sendMessagePage(res, found.html, 'no-store, private');
  });

  router.use(plainErrorHandler(logger));
  return router;
}
