import { sendSuccess, sendSuccessUnderErrors } from '../lib/envelope';
import { field, validate } from '../http/validation';
import type { Services } from '../services';
import { holds, lists, ref, says, saysUnderErrors } from './describe';
import { ApiRoutes } from './routes';
import { ctxOf } from '../http/context';
import { listMessage, PAGING_PARAMS, pagingOf } from '../http/paging';
import { senderFields, senderIdInQuery, senderIdOf, senderInput } from '../http/inputs/senders';

export function mountSenders(routes: ApiRoutes, { senders }: Services): void {
  // The reference documents POST and shows GET: both list.
  const list: Parameters<ApiRoutes['get']>[2] = async (req, res) => {
    sendSuccess(res, listMessage('senders', await senders.list(ctxOf(req), pagingOf(req))));
  };
  const listDoc = { summary: 'List senders', response: lists('senders', ref('Sender')), params: PAGING_PARAMS };
  routes.get('/senders', listDoc, list);
  routes.post('/senders', listDoc, list);

  routes.post('/sender/save', { summary: 'Add a sender and mail its verification link', response: says('Added Successfully') }, validate(...senderFields()), async (req, res) => {
    await senders.add(ctxOf(req), senderInput(req.body));
    sendSuccess(res, 'Added Successfully');
  });

  routes.get('/sender/details', { summary: 'Show a sender', response: holds({ sender: ref('Sender') }) }, validate(senderIdInQuery()), async (req, res) => {
    sendSuccess(res, { sender: await senders.get(ctxOf(req), senderIdOf(req, 'query')) });
  });

  routes.post('/sender/update', { summary: 'Change a sender', response: says('Updated Successfully') }, validate(field('sender_id').required().integer(), ...senderFields()), async (req, res) => {
    await senders.update(ctxOf(req), senderIdOf(req, 'body'), senderInput(req.body));
    sendSuccess(res, 'Updated Successfully');
  });

  routes.delete('/sender/delete', { summary: 'Delete a sender', response: saysUnderErrors('Deleted Successfully') }, validate(senderIdInQuery()), async (req, res) => {
    await senders.remove(ctxOf(req), senderIdOf(req, 'query'));
    sendSuccessUnderErrors(res, 'Deleted Successfully');
  });

  routes.get('/sender/resend-mail', { effect: 'changes', summary: 'Mail a new verification link', response: says('Verification Mail Send') }, validate(senderIdInQuery()), async (req, res) => {
    await senders.resendMail(ctxOf(req), senderIdOf(req, 'query'));
    sendSuccess(res, 'Verification Mail Send');
  });
}
