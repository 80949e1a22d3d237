import express, { Response, Router } from 'express';
import type { Logger } from 'pino';
import { createViews } from '../lib/views';
import type { Services } from '../services';
import type { ArchiveItem } from '../services/campaigns/archive';
import { escapeHtml } from '../mail/template';
import { plainErrorHandler } from './plain-error';
import { sendMessagePage } from './web-view';

/** Characters XML 1.0 does not allow even escaped (C0 controls but tab, newline and return). */
// eslint-disable-next-line no-control-regex
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;
const xmlText = (value: string) => value.replace(NOT_XML, '');

/** A page number from the query: 1 unless a plain positive number. */
function pageOf(value: unknown): number {
  return typeof value === 'string' && /^[1-9]\d{0,5}$/.test(value) ? Number(value) : 1;
}

/**
 * An archived message with a way back to its archive above it: the reader may have come from
 * a feed or a shared link, and the message's own HTML has no such link. Inline styles only (the
 * page's policy allows no style sheet of ours), right after <body> (or at the start).
 */
export function withArchiveLink(html: string, archiveUrl: string): string {
  const link =
    '<p style="margin:0;padding:12px 16px;font:14px/1.5 -apple-system,BlinkMacSystemFont,\'Segoe UI\',Roboto,Helvetica,Arial,sans-serif;background:#ffffff;color:#1f2937;text-align:center">' +
    `<a href="${escapeHtml(archiveUrl)}" style="color:#1d4ed8;text-decoration:underline;display:inline-block;min-height:24px;padding:2px 4px">All emails in this archive</a></p>`;
  const body = /<body[^>]*>/i.exec(html);
  return body ? html.slice(0, body.index + body[0].length) + link + html.slice(body.index + body[0].length) : link + html;
}

/**
 * An account's public archive: `/archive/<id>` lists its completed sends marked `archive`
 * (newest first, 20 a page), `/archive/<id>/<utr>` shows one, `/archive/<id>/rss.xml` is the
 * RSS 2.0 feed of the newest page. No sign-in and no cookies; the id is random (see the
 * archive service). Everything the account typed is escaped by the views (autoescape).
 */
export function createArchiveRouter({ archive }: Services, logger: Logger): Router {
  const views = createViews();
  const router = express.Router();
  const notFound = (res: Response) => res.status(404).setHeader('Cache-Control', 'no-store').type('html').send(views.render('public/not-found.njk', {}));

  router.get('/archive/:id', async (req, res) => {
    const page = await archive.page(String(req.params.id), pageOf(req.query.page));
    if (!page) return notFound(res);
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.type('html').send(views.render('public/archive.njk', page));
  });

  router.get('/archive/:id/rss.xml', async (req, res) => {
    const page = await archive.page(String(req.params.id));
    if (!page) return notFound(res);
    const clean = (item: ArchiveItem) => ({ ...item, subject: xmlText(item.subject), html: xmlText(item.html), pubDate: new Date(item.sentAt).toUTCString() });
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.type('application/rss+xml; charset=utf-8').send(views.render('public/archive-rss.njk', { ...page, title: xmlText(page.title), items: page.items.map(clean) }));
  });

  router.get('/archive/:id/:utr', async (req, res) => {
    const item = await archive.item(String(req.params.id), String(req.params.utr));
    if (!item) return notFound(res);
    sendMessagePage(res, withArchiveLink(item.html, item.archiveUrl), 'public, max-age=300');
  });

  router.use(plainErrorHandler(logger));
  return router;
}
