import type { Request, Response } from 'express';
import { ctxOf } from '../http/context';
import { senderFields, senderInput } from '../http/inputs/senders';
import { toId } from '../lib/http';
import { validate } from '../http/validation';
import type { Services } from '../services';
import { onInvalid } from './errors';
import type { WebRoutes } from './routes';
import type { Views } from './views';

const LIST = { 'sender-list': 'senders/macros.njk#list' } as const;

/** Senders with their verification state: the same service and rules as `/sender/*`. */
export function mountSenders(routes: WebRoutes, { senders, geography }: Services, views: Views): void {
  const idOf = (req: Request) => toId(req.params.id) ?? 0;

  /** The state and city choices that belong to the chosen country and state. */
  const places = async (countryId?: number, stateId?: number) => {
    const states = countryId ? await geography.states({ countryId }) : [];
    const stateOk = stateId !== undefined && states.some((s) => s.id === stateId);
    const cities = stateOk ? await geography.cities({ stateId }) : [];
    return { states, cities };
  };
  const formData = async <T extends object>(req: Request, base: T, fallback: Partial<Record<'country_id' | 'state_id', unknown>> = {}) => {
    const countryId = toId(req.body?.country_id ?? fallback.country_id);
    const stateId = toId(req.body?.state_id ?? fallback.state_id);
    const [countries, choices] = await Promise.all([geography.countries(), places(countryId, stateId)]);
    return { ...base, countries, ...choices };
  };
  const newForm = { title: 'New sender', action: '/senders/new' };
  const editForm = async (req: Request) => {
    const sender = await senders.get(ctxOf(req), idOf(req));
    return formData(req, { title: `Edit ${sender.nickname}`, action: `/senders/${sender.id}/edit`, sender }, sender);
  };
  const listPage = async (req: Request, res: Response) => {
    const { rows } = await senders.list(ctxOf(req));
    views.page(req, res, 'senders/index.njk', { title: 'Senders', senders: rows }, { fragments: LIST });
  };

  routes.get('/senders', listPage);

  routes.get('/senders/new', async (req, res) => {
    views.page(req, res, 'senders/form.njk', { ...(await formData(req, newForm)), values: {} });
  });

  routes.post('/senders/new', onInvalid('senders/form.njk', (req) => formData(req, newForm)), validate(...senderFields()), async (req, res) => {
    await senders.add(ctxOf(req), senderInput(req.body));
    views.redirect(res, '/senders', `Sender saved. A verification link was mailed to ${String(req.body.from_email).trim()}.`);
  });

  routes.get('/senders/:id/edit', async (req, res) => {
    const form = await editForm(req);
    views.page(req, res, 'senders/form.njk', { ...form, values: form.sender });
  });

  routes.post('/senders/:id/edit', onInvalid('senders/form.njk', editForm), validate(...senderFields()), async (req, res) => {
    await senders.update(ctxOf(req), idOf(req), senderInput(req.body));
    views.redirect(res, '/senders', 'Sender saved.');
  });

  // The state and city selects, refreshed when the country or the state changes.
  routes.get('/senders/places', async (req, res) => {
    const countryId = toId(req.query.country_id);
    const stateId = toId(req.query.state_id);
    views.fragment(res, 'senders/macros.njk#places', { ...(await places(countryId, stateId)), values: { state_id: stateId } });
  });

  routes.post('/senders/:id/resend', async (req, res) => {
    const sender = await senders.get(ctxOf(req), idOf(req));
    await senders.resendMail(ctxOf(req), sender.id);
    await views.changed(req, res, '/senders', `A new verification link was mailed to ${sender.from_email}.`, () => listPage(req, res));
  });

  routes.post('/senders/:id/delete', async (req, res) => {
    await senders.remove(ctxOf(req), idOf(req));
    await views.changed(req, res, '/senders', 'Sender deleted.', () => listPage(req, res));
  });
}
