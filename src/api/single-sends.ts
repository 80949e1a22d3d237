import type { Request, RequestHandler } from 'express';
import { sendSuccess } from '../lib/envelope';
import { field, validate } from '../http/validation';
import { toFlag } from '../lib/validation';
import type { Services } from '../services';
import { utrField, utrOf } from '../http/campaign-params';
import { bulkDelete } from './crud';
import { holds, lists, ref, says } from './describe';
import { uuid } from './schema-words';
import { ApiRoutes } from './routes';
import { ctxOf } from '../http/context';
import { listMessage, PAGING_PARAMS, pagingOf } from '../http/paging';
import { singleSendFields, singleSendInput, testSendFields, testSendInput } from '../http/inputs/single-sends';

export function mountSingleSends(routes: ApiRoutes, { singleSends, sendControls, testSends }: Services): void {
  routes.get('/single-send/list', { summary: 'List single sends', response: lists('singleSends', ref('SingleSend')), params: PAGING_PARAMS }, async (req, res) => {
    sendSuccess(res, listMessage('singleSends', await singleSends.list(ctxOf(req), pagingOf(req))));
  });

  routes.post('/single/send/create', { summary: 'Create a single send (sent now or at its schedule)', response: holds({ utr: uuid }) }, validate(...singleSendFields()), async (req, res) => {
    sendSuccess(res, { utr: await singleSends.create(ctxOf(req), singleSendInput(req.body)) });
  });

  // The reference documents GET and shows POST: both duplicate.
  const duplicate: RequestHandler[] = [
    validate(utrField()),
    async (req: Request, res) => {
      await singleSends.duplicate(ctxOf(req), utrOf(req));
      sendSuccess(res, 'Duplicated Successfully');
    },
  ];
  const duplicateDoc = { effect: 'changes', summary: 'Duplicate a single send (a draft copy)', response: says('Duplicated Successfully') } as const;
  routes.get('/single/send/duplicate', duplicateDoc, ...duplicate);
  routes.post('/single/send/duplicate', duplicateDoc, ...duplicate);

  routes.get('/single-send/details', { summary: 'Show a single send', response: holds({ singleSend: { type: 'array', items: ref('SingleSend'), minItems: 1, maxItems: 1 } }, '`message.singleSend`: an array holding the one single send.') }, validate(utrField()), async (req, res) => {
    sendSuccess(res, { singleSend: [await singleSends.get(ctxOf(req), utrOf(req))] });
  });

  routes.post('/single/send/update', { summary: 'Change a single send', response: holds({ utr: uuid }) }, validate(utrField(), ...singleSendFields()), async (req, res) => {
    sendSuccess(res, { utr: await singleSends.update(ctxOf(req), utrOf(req), singleSendInput(req.body)) });
  });

  // Extensions: pause, resume and cancel a scheduled or running send.
  const controls = { pause: 'Single Send Paused', resume: 'Single Send Resumed', cancel: 'Single Send Cancelled' } as const;
  for (const [action, answer] of Object.entries(controls) as Array<[keyof typeof controls, string]>) {
    routes.get(`/single/send/${action}`, { effect: 'changes', summary: `${action[0].toUpperCase()}${action.slice(1)} a single send (extension)`, response: says(answer) }, validate(utrField()), async (req, res) => {
      await sendControls[action](ctxOf(req), utrOf(req));
      sendSuccess(res, answer);
    });
  }

  // Extension: the message for one contact, to up to 10 addresses, marked [Test].
  routes.post('/single/send/test', { summary: 'Send a test of a single send (extension)', response: says('Test Email Sent') }, validate(utrField(), ...testSendFields()), async (req, res) => {
    const { addresses, contactId } = testSendInput(req.body);
    await testSends.singleSend(ctxOf(req), utrOf(req), addresses, contactId);
    sendSuccess(res, 'Test Email Sent');
  });

  routes.delete('/single/send/delete', { summary: 'Delete (or cancel) a single send', response: says('Deleted Successfully') }, validate(utrField()), async (req, res) => {
    await singleSends.remove(ctxOf(req), utrOf(req));
    sendSuccess(res, 'Deleted Successfully');
  });

  // Extension: the public archive flag alone, which a started or sent send may change too.
  routes.post('/single/send/archive', { summary: 'Show or hide a single send in the public archive (extension)', response: says('Saved Successfully') }, validate(utrField(), field('archive').required().boolean()), async (req, res) => {
    await singleSends.setArchive(ctxOf(req), utrOf(req), toFlag(req.body.archive) === 1 ? 1 : 0);
    sendSuccess(res, 'Saved Successfully');
  });

  bulkDelete(routes, '/single/send/bulk-delete', singleSends.removeMany, 'Delete single sends');
}
