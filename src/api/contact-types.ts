import { sendSuccess, sendSuccessUnderErrors } from '../lib/envelope';
import { toId } from '../lib/http';
import { field, validate } from '../http/validation';
import type { Services } from '../services';
import { holds, lists, ref, says, saysUnderErrors } from './describe';
import { ApiRoutes } from './routes';
import { ctxOf } from '../http/context';
import { listMessage, PAGING_PARAMS, pagingOf } from '../http/paging';
import { contactTypeName } from '../http/inputs/contact-types';

export function mountContactTypes(routes: ApiRoutes, { contactTypes }: Services): void {
  routes.get('/contacts-type', { summary: 'List contact types', response: lists('contactTypes', ref('ContactTypeListed')), params: PAGING_PARAMS }, async (req, res) => {
    sendSuccess(res, listMessage('contactTypes', await contactTypes.list(ctxOf(req), pagingOf(req))));
  });

  routes.post('/contacts-type/add', { summary: 'Add a contact type', response: says('Added Successfully') }, validate(contactTypeName()), async (req, res) => {
    await contactTypes.add(ctxOf(req), { name: String(req.body.name) });
    sendSuccess(res, 'Added Successfully');
  });

  routes.get('/contacts-type/view', { summary: 'Show a contact type', response: holds({ contactType: ref('ContactType') }) }, validate(field('contact_type_id', 'query').required().integer()), async (req, res) => {
    const contactType = await contactTypes.get(ctxOf(req), toId(req.query.contact_type_id) ?? 0);
    sendSuccess(res, { contactType });
  });

  routes.post('/contacts-type/update', { summary: 'Rename a contact type', response: says('Updated Successfully') }, validate(field('id').required().integer(), contactTypeName()), async (req, res) => {
    await contactTypes.update(ctxOf(req), toId(req.body.id) ?? 0, { name: String(req.body.name) });
    sendSuccess(res, 'Updated Successfully');
  });

  routes.delete('/contacts-type/delete', { summary: 'Delete a contact type and its contacts', response: saysUnderErrors('Deleted Successfully') }, validate(field('contact_type_id', 'query').required().integer()), async (req, res) => {
    await contactTypes.remove(ctxOf(req), toId(req.query.contact_type_id) ?? 0);
    sendSuccessUnderErrors(res, 'Deleted Successfully');
  });
}
