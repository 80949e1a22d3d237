import type { Request, Response } from 'express';
import { contactTypeName } from '../http/inputs/contact-types';
import { ctxOf } from '../http/context';
import { toId } from '../lib/http';
import { validate } from '../http/validation';
import type { Services } from '../services';
import { onInvalid } from './errors';
import type { WebRoutes } from './routes';
import type { Views } from './views';

const LIST = { 'contact-type-list': 'contact-types/macros.njk#list' } as const;

/** Contact types: the same service and the same name rule as `/contacts-type/*` of the API. */
export function mountContactTypes(routes: WebRoutes, { contactTypes }: Services, views: Views): void {
  const listPage = async (req: Request, res: Response) => {
    const { rows } = await contactTypes.list(ctxOf(req));
    views.page(req, res, 'contact-types/index.njk', { title: 'Contact types', types: rows }, { fragments: LIST });
  };
  const idOf = (req: Request) => toId(req.params.id) ?? 0;
  const newForm = { title: 'New contact type', action: '/contact-types/new' };

  routes.get('/contact-types', listPage);

  routes.get('/contact-types/new', (req, res) => {
    views.page(req, res, 'contact-types/form.njk', { ...newForm, values: {} });
  });

  routes.post('/contact-types/new', onInvalid('contact-types/form.njk', () => newForm), validate(contactTypeName()), async (req, res) => {
    await contactTypes.add(ctxOf(req), { name: String(req.body.name) });
    views.redirect(res, '/contact-types', 'Contact type added.');
  });

  routes.get('/contact-types/:id/edit', async (req, res) => {
    const type = await contactTypes.get(ctxOf(req), idOf(req));
    views.page(req, res, 'contact-types/form.njk', { title: `Edit ${type.name}`, action: `/contact-types/${type.id}/edit`, values: type });
  });

  routes.post(
    '/contact-types/:id/edit',
    onInvalid('contact-types/form.njk', async (req) => {
      const type = await contactTypes.get(ctxOf(req), idOf(req));
      return { title: `Edit ${type.name}`, action: `/contact-types/${type.id}/edit` };
    }),
    validate(contactTypeName()),
    async (req, res) => {
      await contactTypes.update(ctxOf(req), idOf(req), { name: String(req.body.name) });
      views.redirect(res, '/contact-types', 'Contact type saved.');
    },
  );

  // From the list (htmx swaps the list in place) or from a plain form (redirect).
  routes.post('/contact-types/:id/delete', async (req, res) => {
    await contactTypes.remove(ctxOf(req), idOf(req));
    await views.changed(req, res, '/contact-types', 'Contact type deleted, with its contacts.', () => listPage(req, res));
  });
}
