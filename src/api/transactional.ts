import { sendSuccess } from '../lib/envelope';
import { ctxOf } from '../http/context';
import {
  BATCH_PARAMS,
  ID_IN_BODY,
  ID_IN_QUERY,
  IDEMPOTENCY_WORDS,
  idempotencyKeyOf,
  LOG_PARAMS,
  MESSAGE_PARAMS,
  TEMPLATE_PARAMS,
} from '../http/inputs/transactional';
import { validate, field } from '../http/validation';
import type { Services } from '../services';
import { IDEMPOTENCY_WORDS as CONFLICTS } from '../services/transactional/idempotency';
import { checkTemplate } from '../services/transactional/templates';
import { logFilters, messageIdOf } from '../services/transactional/transactional';
import { arrayOf, int } from './schema-words';
import { failsWith, holds, ref, says } from './describe';
import type { ApiRoutes } from './routes';

/** Transactional mail (extension): send, the message log, retry, templates. */
export function mountTransactional(routes: ApiRoutes, { transactional }: Services): void {
  const conflicts = { '409': failsWith('The Idempotency-Key was used with another request, or its first request is still being handled.', Object.values(CONFLICTS)) };
  const accepted = holds({ messages: arrayOf(ref('TransactionalAccepted')) }, '`message.messages`: one per address, in order: `{id, to, status}` (`queued` or `suppressed`).');

  routes.post('/transactional/send', { summary: 'Send a transactional message', description: IDEMPOTENCY_WORDS, response: accepted, params: MESSAGE_PARAMS, failures: conflicts }, async (req, res) => {
    sendSuccess(res, { messages: await transactional.send(ctxOf(req), req.body, idempotencyKeyOf(req)) });
  });

  routes.post('/transactional/batch', { summary: 'Send up to 100 transactional messages', description: `One invalid item is a 422 naming it and nothing is sent. ${IDEMPOTENCY_WORDS}`, response: accepted, params: BATCH_PARAMS, failures: conflicts }, async (req, res) => {
    sendSuccess(res, { messages: await transactional.batch(ctxOf(req), req.body, idempotencyKeyOf(req)) });
  });

  routes.get('/transactional/messages', { summary: 'The transactional message log', response: holds({ messages: arrayOf(ref('TransactionalMessage')), total: int }), params: LOG_PARAMS }, async (req, res) => {
    sendSuccess(res, await transactional.list(ctxOf(req), logFilters(req.query as Record<string, unknown>)));
  });

  routes.get('/transactional/messages/details', { summary: 'A transactional message and its timeline', response: holds({ message: ref('TransactionalDetails') }), params: [ID_IN_QUERY] }, async (req, res) => {
    sendSuccess(res, { message: await transactional.details(ctxOf(req), messageIdOf(req.query.id)) });
  });

  routes.post('/transactional/messages/retry', { summary: 'Queue a failed transactional message again', response: says('Queued Successfully'), params: [ID_IN_BODY] }, async (req, res) => {
    await transactional.retry(ctxOf(req), messageIdOf(req.body?.id));
    sendSuccess(res, 'Queued Successfully');
  });

  routes.get('/transactional/templates', { summary: 'List transactional templates', response: holds({ templates: arrayOf(ref('TransactionalTemplate')) }) }, async (req, res) => {
    sendSuccess(res, { templates: await transactional.templates.list(ctxOf(req)) });
  });

  routes.post('/transactional/templates/save', { summary: 'Add a transactional template', response: holds({ template: ref('TransactionalTemplate') }), params: TEMPLATE_PARAMS }, async (req, res) => {
    sendSuccess(res, { template: await transactional.templates.save(ctxOf(req), checkTemplate(req.body ?? {})) });
  });

  routes.post(
    '/transactional/templates/update',
    { summary: 'Change a transactional template', response: holds({ template: ref('TransactionalTemplate') }), params: TEMPLATE_PARAMS },
    validate(field('id').required().integer(1)),
    async (req, res) => {
      sendSuccess(res, { template: await transactional.templates.update(ctxOf(req), Number(req.body.id), checkTemplate(req.body)) });
    },
  );

  routes.delete('/transactional/templates/delete', { summary: 'Delete a transactional template', response: says('Deleted Successfully') }, validate(field('id', 'query').required().integer(1)), async (req, res) => {
    await transactional.templates.remove(ctxOf(req), Number(req.query.id));
    sendSuccess(res, 'Deleted Successfully');
  });
}
