import { sendSuccess } from '../lib/envelope';
import { toId } from '../lib/http';
import { field, validate } from '../http/validation';
import type { Services } from '../services';
import { bulkDelete, deleteById } from './crud';
import { holds, lists, ref, says } from './describe';
import { ApiRoutes } from './routes';
import { ctxOf } from '../http/context';
import { listMessage, PAGING_PARAMS, pagingOf } from '../http/paging';
import { sendStreamedList } from './stream-list';
import { mountContactImport } from './contact-import';
import type { Config } from '../config';
import { contactInput, contactRules, SEARCH_PARAM, searchOf } from '../http/inputs/contacts';

export function mountContacts(routes: ApiRoutes, services: Services, config: Config): void {
  const { contacts } = services;

  routes.get('/contacts/list', { summary: 'List contacts', response: lists('contacts', ref('ContactListed')), params: [...PAGING_PARAMS, SEARCH_PARAM] }, async (req, res) => {
    const search = searchOf(req);
    const paging = pagingOf(req);
    if (paging) return sendSuccess(res, listMessage('contacts', await contacts.listPage(ctxOf(req), paging, search)));
    await sendStreamedList(res, 'contacts', contacts.listChunks(ctxOf(req), search));
  });

  routes.post('/contacts/add', { summary: 'Add a contact', response: says('Contact Added Successfully') }, validate(...contactRules()), async (req, res) => {
    await contacts.add(ctxOf(req), contactInput(req));
    sendSuccess(res, 'Contact Added Successfully');
  });

  mountContactImport(routes, services, config);

  routes.get('/contacts/details', { summary: 'Show a contact', response: holds({ contact: ref('Contact') }) }, validate(field('contact_id', 'query').required().integer()), async (req, res) => {
    const contact = await contacts.get(ctxOf(req), toId(req.query.contact_id) ?? 0);
    sendSuccess(res, { contact });
  });

  routes.post('/contacts/update', { summary: 'Change a contact', response: says('Contact Updated Successfully') }, validate(field('contact_id').required().integer(), ...contactRules()), async (req, res) => {
    await contacts.update(ctxOf(req), toId(req.body.contact_id) ?? 0, contactInput(req));
    sendSuccess(res, 'Contact Updated Successfully');
  });

  deleteById(routes, '/contacts/delete', 'contact_id', contacts.removeMany, 'Delete a contact');
  bulkDelete(routes, '/contacts/bulk-delete', contacts.removeMany, 'Delete contacts');
}
