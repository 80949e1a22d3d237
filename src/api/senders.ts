import { sendSuccess, sendSuccessUnderErrors } from '../lib/envelope';
import { field, validate } from '../http/validation';
import type { Services } from '../services';
import { ApiRoutes } from './routes';
import { ctxOf } from '../http/context';
import { listMessage, pagingOf } from '../http/paging';
import { senderFields, senderIdInQuery, senderIdOf, senderInput } from '../http/inputs/senders';

export function mountSenders(routes: ApiRoutes, { senders }: Services): void {
  // The reference documents POST and shows GET: both list.
  const list: Parameters<ApiRoutes['get']>[1] = async (req, res) => {
    sendSuccess(res, listMessage('senders', await senders.list(ctxOf(req), pagingOf(req))));
  };
  routes.get('/senders', list);
  routes.post('/senders', list);

  routes.post('/sender/save', validate(...senderFields()), async (req, res) => {
    await senders.add(ctxOf(req), senderInput(req.body));
    sendSuccess(res, 'Added Successfully');
  });

  routes.get('/sender/details', validate(senderIdInQuery()), async (req, res) => {
    sendSuccess(res, { sender: await senders.get(ctxOf(req), senderIdOf(req, 'query')) });
  });

  routes.post('/sender/update', validate(field('sender_id').required().integer(), ...senderFields()), async (req, res) => {
    await senders.update(ctxOf(req), senderIdOf(req, 'body'), senderInput(req.body));
    sendSuccess(res, 'Updated Successfully');
  });

  routes.delete('/sender/delete', validate(senderIdInQuery()), async (req, res) => {
    await senders.remove(ctxOf(req), senderIdOf(req, 'query'));
    sendSuccessUnderErrors(res, 'Deleted Successfully');
  });

  routes.get('/sender/resend-mail', validate(senderIdInQuery()), async (req, res) => {
    await senders.resendMail(ctxOf(req), senderIdOf(req, 'query'));
    sendSuccess(res, 'Verification Mail Send');
  });
}
