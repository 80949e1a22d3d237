import type { Request, RequestHandler, Response } from 'express';
import helmet from 'helmet';
import type { Config } from '../config';
import { ctxOf } from '../http/context';
import { draftPreviewInput, ownTemplateInput } from '../http/inputs/editor';
import { toId } from '../lib/http';
import type { Services } from '../services';
import { dashboardDirectives } from './csp';
import { onInvalid } from './errors';
import type { WebRoutes } from './routes';
import { shapeOf, type Views } from './views';

const SAVED = { 'own-template-status': 'editor/macros.njk#saved' } as const;

/**
 * The Content-Security-Policy of the two editor pages (the single-send composer and the
 * automation step page). GrapesJS writes `<style>` elements and `style` attributes into the page
 * and into its canvas (an iframe it fills itself, like the live preview's `srcdoc` frame, which
 * inherits this policy), so these pages alone allow inline styles; images of a design may come
 * from any http(s) address, as they do in mail. Scripts stay `'self'` only: no inline script, no
 * eval, nothing from elsewhere; every other directive is the dashboard's.
 */
function editorHeaders(config: Config): RequestHandler {
  const https = config.baseUrl.startsWith('https:');
  return helmet.contentSecurityPolicy({
    useDefaults: false,
    directives: {
      ...dashboardDirectives(https),
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:', 'blob:', 'http:', 'https:'],
      fontSrc: ["'self'", 'data:'],
    },
  });
}

/**
 * Put before the handlers of a page that shows the editor. Its scripts need the editor's policy
 * from the document's first load: a boosted navigation (htmx swapping the body into a page
 * served under the strict policy) is turned into a full load instead.
 */
export function editorPage(config: Config): RequestHandler {
  const headers = editorHeaders(config);
  return (req, res, next) => {
    if (req.method === 'GET' && shapeOf(req) === 'body') {
      res.set({ 'HX-Redirect': req.originalUrl, 'Cache-Control': 'no-store' });
      res.vary('HX-Request');
      return void res.status(200).type('html').send('');
    }
    headers(req, res, next);
  };
}

/** What the editor on a page lists: the placeholders of the account and its own templates. */
export async function designerChoices(services: Services, req: Request) {
  const ctx = ctxOf(req);
  const [placeholders, ownTemplates] = await Promise.all([services.designEditor.placeholders(ctx), services.ownTemplates.list(ctx)]);
  return { placeholders, ownTemplates };
}

/**
 * The editor's routes: the live preview of the design being edited, and the account's own
 * templates (saved from the editor, listed, renamed, deleted, and loaded back into it).
 */
export function mountDesignEditor(routes: WebRoutes, services: Services, views: Views): void {
  const { designEditor, ownTemplates } = services;

  // The design in the form, rendered for one contact by the sending engine's renderer.
  routes.post('/editor/preview', async (req, res) => {
    const input = draftPreviewInput(req.body);
    const preview = await designEditor.previewDraft(ctxOf(req), input);
    views.fragment(res, 'editor/macros.njk#preview', { preview, search: input.search ?? '' });
  });

  const listData = async (req: Request) => ({ title: 'Your templates', templates: await ownTemplates.list(ctxOf(req)) });
  const listPage = async (req: Request, res: Response) => views.page(req, res, 'own-templates/index.njk', await listData(req));

  routes.get('/my-templates', listPage);

  // "Save as template" from the editor: the editor's script asks for the message alone (#own-template-status).
  routes.post('/my-templates', onInvalid('own-templates/index.njk', listData, { fragments: SAVED }), async (req, res) => {
    const input = ownTemplateInput(req.body);
    await ownTemplates.create(ctxOf(req), input);
    const message = `Saved as your template “${input.template_name.trim()}”. Pick it under “Your templates” next time.`;
    if (shapeOf(req) !== 'fragment') return views.redirect(res, '/my-templates', message);
    views.fragment(res, 'editor/macros.njk#saved', { message });
  });

  // The design of one of the account's templates, for the editor to load.
  routes.get('/my-templates/:id/design', async (req, res) => {
    const template = await ownTemplates.get(ctxOf(req), toId(req.params.id) ?? 0);
    res.set('Cache-Control', 'no-store');
    res.json({ template_name: template.template_name, template_json: template.template_json, template_html: template.template_html });
  });

  routes.post('/my-templates/:id/rename', onInvalid('own-templates/index.njk', listData), async (req, res) => {
    await ownTemplates.rename(ctxOf(req), toId(req.params.id) ?? 0, req.body.template_name);
    views.redirect(res, '/my-templates', 'Template renamed.');
  });

  routes.post('/my-templates/:id/delete', async (req, res) => {
    await ownTemplates.remove(ctxOf(req), toId(req.params.id) ?? 0);
    views.redirect(res, '/my-templates', 'Template deleted. Sends and steps made from it keep their design.');
  });
}
