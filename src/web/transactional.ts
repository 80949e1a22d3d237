import type { Request, Response } from 'express';
import type { Config } from '../config';
import { ctxOf } from '../http/context';
import { TRANSACTIONAL_STATUSES } from '../lib/constants';
import { ValidationError } from '../lib/errors';
import { toId } from '../lib/http';
import type { Services } from '../services';
import { checkTemplate } from '../services/transactional/templates';
import { logFilters } from '../services/transactional/transactional';
import { designerChoices, editorPage } from './editor';
import { onInvalid } from './errors';
import { pagerOf } from './paging';
import type { WebRoutes } from './routes';
import type { Views } from './views';

const LOG = { 'tx-log': 'transactional/macros.njk#log' } as const;

/** What each status is called on the page. */
const STATUS_WORDS: Record<string, string> = {
  queued: 'Queued',
  sent: 'Sent to the relay',
  delivered: 'Delivered',
  deferred: 'Waiting to try again',
  bounced: 'Bounced',
  complained: 'Marked as spam',
  failed: 'Failed',
  suppressed: 'Not sent (suppressed)',
};

/** The template form's fields: the designer keeps its HTML in `template_html`. */
function templateBody(body: Record<string, unknown>) {
  return checkTemplate({ name: body.name, subject: body.subject, html: body.template_html, text: body.text });
}

function sampleData(text: unknown): Record<string, unknown> {
  if (typeof text !== 'string' || !text.trim()) return {};
  try {
    const data = JSON.parse(text) as unknown;
    if (data && typeof data === 'object' && !Array.isArray(data)) return data as Record<string, unknown>;
  } catch {
    // Said below.
  }
  throw ValidationError.of('sample_data', 'The sample data must be a JSON object, like {"order_id": "A-17"}.');
}

/**
 * The Transactional page: the message log with its filters, a message's timeline with retry,
 * the templates (in the editor of the account's own templates), and the Setup tab.
 */
export function mountTransactional(routes: WebRoutes, services: Services, views: Views, config: Config): void {
  const { transactional } = services;
  const editor = editorPage(config);

  const logData = async (req: Request) => {
    const query = req.query as Record<string, unknown>;
    const filters = logFilters({ ...query, limit: 25 });
    const { messages, total } = await transactional.list(ctxOf(req), filters);
    const result = { rows: messages, pagination: { page: filters.page, per_page: 25, total } };
    const values = { status: query.status ?? '', to: query.to ?? '', tag: query.tag ?? '', from_date: query.from_date ?? '', to_date: query.to_date ?? '' };
    return { title: 'Transactional mail', tab: 'log', rows: messages, pager: pagerOf(req, result, '/transactional'), values, statusWords: STATUS_WORDS, statuses: TRANSACTIONAL_STATUSES };
  };
  routes.get('/transactional', async (req, res) => views.page(req, res, 'transactional/index.njk', await logData(req), { fragments: LOG }));

  const messageData = async (req: Request) => {
    const message = await transactional.details(ctxOf(req), toId(req.params.id) ?? 0);
    return { title: `Message to ${message.to}`, tab: 'log', message, statusWords: STATUS_WORDS };
  };
  routes.get('/transactional/messages/:id', async (req, res) => views.page(req, res, 'transactional/message.njk', await messageData(req)));
  routes.post('/transactional/messages/:id/retry', onInvalid('transactional/message.njk', messageData), async (req, res) => {
    const id = toId(req.params.id) ?? 0;
    await transactional.retry(ctxOf(req), id);
    views.redirect(res, `/transactional/messages/${id}`, 'The message is queued again.');
  });

  const templatesData = async (req: Request) => ({ title: 'Transactional templates', tab: 'templates', templates: await transactional.templates.list(ctxOf(req)) });
  routes.get('/transactional/templates', async (req, res) => views.page(req, res, 'transactional/templates.njk', await templatesData(req)));

  const formData = (values: Record<string, unknown>, id?: number) => async (req: Request) => ({
    title: id ? 'Change the template' : 'New transactional template',
    tab: 'templates',
    id,
    values: { ...values, ...(req.method === 'POST' ? req.body : {}) },
    ...(await designerChoices(services, req)),
  });
  const editData = async (req: Request) => {
    const template = await transactional.templates.get(ctxOf(req), toId(req.params.id) ?? 0);
    return formData({ name: template.name, subject: template.subject, template_html: template.html, text: template.text ?? '' }, template.id)(req);
  };
  routes.get('/transactional/templates/new', editor, async (req, res) => views.page(req, res, 'transactional/template-form.njk', await formData({ sample_data: '{}' })(req)));
  routes.get('/transactional/templates/:id/edit', editor, async (req, res) => views.page(req, res, 'transactional/template-form.njk', await editData(req)));

  // The form's content rendered for the sample data, as a fragment beside the form.
  routes.post('/transactional/templates/preview', async (req, res: Response) => {
    const b = req.body as Record<string, unknown>;
    let preview: ReturnType<typeof transactional.templates.preview>;
    try {
      const data = sampleData(b.sample_data);
      preview = transactional.templates.preview({ subject: String(b.subject ?? ''), html: String(b.template_html ?? ''), text: b.text ? String(b.text) : null }, data);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      preview = { error: err.fields.sample_data[0] };
    }
    views.fragment(res, 'transactional/macros.njk#preview', { preview });
  });

  routes.post('/transactional/templates', editor, onInvalid('transactional/template-form.njk', formData({})), async (req, res) => {
    const template = await transactional.templates.save(ctxOf(req), templateBody(req.body));
    views.redirect(res, '/transactional/templates', `Template “${template.name}” saved.`);
  });
  routes.post('/transactional/templates/:id', editor, onInvalid('transactional/template-form.njk', editData), async (req, res) => {
    const template = await transactional.templates.update(ctxOf(req), toId(req.params.id) ?? 0, templateBody(req.body));
    views.redirect(res, '/transactional/templates', `Template “${template.name}” saved.`);
  });
  routes.post('/transactional/templates/:id/delete', onInvalid('transactional/templates.njk', templatesData), async (req, res) => {
    await transactional.templates.remove(ctxOf(req), toId(req.params.id) ?? 0);
    views.redirect(res, '/transactional/templates', 'Template deleted.');
  });

  routes.get('/transactional/setup', async (req, res) => {
    const account = await services.accounts.get(ctxOf(req).userId);
    const host = new URL(config.baseUrl).hostname;
    const curl = [
      `curl ${config.baseUrl}/api/v1/transactional/send \\`,
      `  -H 'PublicKey: ${account?.public_key ?? ''}' \\`,
      `  -H 'SecretKey: YOUR_SECRET_KEY' \\`,
      `  -H 'Idempotency-Key: order-1001' \\`,
      `  -H 'Content-Type: application/json' \\`,
      `  -d '{"to": "customer@example.com", "from": "you@your-domain.example", "subject": "Your order {{ data.order_id }}", "html": "<p>Thanks for your order {{ data.order_id }}.</p>", "data": {"order_id": "1001"}}'`,
    ].join('\n');
    views.page(req, res, 'transactional/setup.njk', {
      title: 'Transactional mail: setup',
      tab: 'setup',
      curl,
      smtp: config.submission ? { host, port: config.submission.port, user: account?.public_key ?? '' } : undefined,
    });
  });
}
