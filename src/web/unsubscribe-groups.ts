import type { Request, Response } from 'express';
import { groupFields, groupInput } from '../http/inputs/unsubscribe-groups';
import { ctxOf } from '../http/context';
import { bulkIds, toId } from '../lib/http';
import { splitAddresses } from '../lib/validation';
import { validate } from '../http/validation';
import type { Services } from '../services';
import { onInvalid } from './errors';
import { addressListInput, counted } from './forms';
import { pagerOf, pagingOf } from './paging';
import type { WebRoutes } from './routes';
import type { Views } from './views';

const RECIPIENTS = { 'group-recipient-list': 'unsubscribe-groups/macros.njk#recipients' } as const;
const DISPLAY_CHOICES = [
  { value: '1', label: 'Yes: recipients may choose it on their preference page' },
  { value: '0', label: 'No: only you add addresses to it' },
];

/** Unsubscribe groups and their recipients: the same services and rules as `/unsubscribes-groups/*`. */
export function mountUnsubscribeGroups(routes: WebRoutes, { unsubscribeGroups }: Services, views: Views): void {
  const idOf = (req: Request) => toId(req.params.id) ?? 0;
  const newForm = { title: 'New unsubscribe group', action: '/unsubscribe-groups/new', choices: DISPLAY_CHOICES };
  const editForm = async (req: Request) => {
    const group = await unsubscribeGroups.get(ctxOf(req), idOf(req));
    return { title: `Edit ${group.group_name}`, action: `/unsubscribe-groups/${group.id}/edit`, choices: DISPLAY_CHOICES, group };
  };
  const recipientsData = async (req: Request) => {
    const ctx = ctxOf(req);
    const [group, result] = await Promise.all([unsubscribeGroups.get(ctx, idOf(req)), unsubscribeGroups.listRecipients(ctx, idOf(req), pagingOf(req))]);
    return { title: group.group_name, group, rows: result.rows, pager: pagerOf(req, result, `/unsubscribe-groups/${group.id}`) };
  };
  const recipientsPage = async (req: Request, res: Response) =>
    views.page(req, res, 'unsubscribe-groups/show.njk', await recipientsData(req), { fragments: RECIPIENTS });

  routes.get('/unsubscribe-groups', async (req, res) => {
    const { rows } = await unsubscribeGroups.list(ctxOf(req));
    views.page(req, res, 'unsubscribe-groups/index.njk', { title: 'Unsubscribe groups', groups: rows });
  });

  routes.get('/unsubscribe-groups/new', (req, res) => {
    views.page(req, res, 'unsubscribe-groups/form.njk', { ...newForm, values: { is_display: 1 } });
  });

  routes.post('/unsubscribe-groups/new', onInvalid('unsubscribe-groups/form.njk', () => newForm), validate(...groupFields()), async (req, res) => {
    const id = await unsubscribeGroups.add(ctxOf(req), groupInput(req));
    views.redirect(res, `/unsubscribe-groups/${id}`, 'Unsubscribe group created.');
  });

  routes.get('/unsubscribe-groups/:id/edit', async (req, res) => {
    const form = await editForm(req);
    views.page(req, res, 'unsubscribe-groups/form.njk', { ...form, values: form.group });
  });

  routes.post('/unsubscribe-groups/:id/edit', onInvalid('unsubscribe-groups/form.njk', editForm), validate(...groupFields()), async (req, res) => {
    await unsubscribeGroups.update(ctxOf(req), idOf(req), groupInput(req));
    views.redirect(res, `/unsubscribe-groups/${idOf(req)}`, 'Unsubscribe group saved.');
  });

  routes.get('/unsubscribe-groups/:id', recipientsPage);

  routes.post(
    '/unsubscribe-groups/:id/recipients',
    onInvalid('unsubscribe-groups/show.njk', recipientsData),
    ...addressListInput(),
    async (req, res) => {
      const addresses = splitAddresses(req.body.email_address);
      await unsubscribeGroups.addRecipients(ctxOf(req), idOf(req), addresses);
      views.redirect(res, `/unsubscribe-groups/${idOf(req)}`, counted(addresses.length, 'Address', 'addresses', 'added'));
    },
  );

  routes.post('/unsubscribe-groups/:id/recipients/delete', async (req, res) => {
    const ids = bulkIds(req.body.ids, 'ids');
    // The group is looked up first, so another account's group is a 404 like everywhere else.
    await unsubscribeGroups.get(ctxOf(req), idOf(req));
    await unsubscribeGroups.removeRecipients(ctxOf(req), ids);
    const flash = counted(ids.length, 'Address', 'addresses', 'removed');
    await views.changed(req, res, `/unsubscribe-groups/${idOf(req)}`, flash, () => recipientsPage(req, res));
  });
}
