import path from 'node:path';
import { toId } from '../lib/http';
import type { Services } from '../services';
import { MESSAGE_CSP } from './outbox';
import type { WebRoutes } from './routes';
import type { Views } from './views';

/** The preview image as served from public/templates/ (the record names the file). */
function localImage(previewImage: string): string {
  return previewImage ? `/templates/${encodeURIComponent(path.basename(previewImage))}` : '';
}

/** The built-in design templates and the placeholders a message may use. */
export function mountDesignTemplates(routes: WebRoutes, { designTemplates }: Services, views: Views): void {
  routes.get('/design-templates', async (req, res) => {
    const { rows } = await designTemplates.list();
    const templates = rows.map((t) => ({ id: t.id, name: t.template_name, image: localImage(t.preview_image), blank: t.is_blank === 1 }));
    views.page(req, res, 'design-templates/index.njk', { title: 'Design templates', templates, placeholders: designTemplates.dynamicContent() });
  });

  routes.get('/design-templates/:id', async (req, res) => {
    const template = await designTemplates.get(toId(req.params.id) ?? 0);
    views.page(req, res, 'design-templates/show.njk', { title: template.template_name, template, placeholders: designTemplates.dynamicContent() });
  });

  routes.get('/design-templates/:id/html', async (req, res) => {
    const template = await designTemplates.get(toId(req.params.id) ?? 0);
    res.set({ 'Content-Security-Policy': MESSAGE_CSP, 'X-Frame-Options': 'SAMEORIGIN' });
    res.type('html').send(template.html_code);
  });
}
