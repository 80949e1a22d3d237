import { sendSuccess } from '../lib/envelope';
import { validate } from '../http/validation';
import { ctxOf } from '../http/context';
import { listMessage, PAGING_PARAMS, pagingOf } from '../http/paging';
import { rotateSecretOf, rotateSecretRule, webhookIdOf, webhookIdRule, webhookInputOf, webhookRules } from '../http/inputs/outgoing-webhooks';
import type { Services } from '../services';
import { deleteById } from './crud';
import { holds, lists, ref } from './describe';
import { ApiRoutes } from './routes';

/**
 * Extension: outgoing webhooks, under the API prefix (/api/v1/webhooks…).
 * The provider webhooks coming in (POST /webhooks/ses, …) are another router, outside the prefix.
 */
export function mountOutgoingWebhooks(routes: ApiRoutes, { outgoingWebhooks }: Services): void {
  routes.get('/webhooks', { summary: 'List outgoing webhooks (extension)', response: lists('webhooks', ref('Webhook')), params: PAGING_PARAMS }, async (req, res) => {
    sendSuccess(res, listMessage('webhooks', await outgoingWebhooks.list(ctxOf(req), pagingOf(req))));
  });

  routes.post('/webhooks/save', { summary: 'Add an outgoing webhook (extension; its secret is shown once)', response: holds({ webhook: ref('Webhook') }) }, validate(...webhookRules()), async (req, res) => {
    sendSuccess(res, { webhook: await outgoingWebhooks.save(ctxOf(req), webhookInputOf(req)) });
  });

  routes.post('/webhooks/update', { summary: 'Change an outgoing webhook (extension)', response: holds({ webhook: ref('Webhook') }) }, validate(webhookIdRule(), ...webhookRules(), rotateSecretRule()), async (req, res) => {
    sendSuccess(res, { webhook: await outgoingWebhooks.update(ctxOf(req), webhookIdOf(req), webhookInputOf(req), rotateSecretOf(req)) });
  });

  deleteById(routes, '/webhooks/delete', 'id', outgoingWebhooks.remove, 'Delete an outgoing webhook (extension)');

  // Always paged (a send's log has a row per message): page 1 of 100 unless asked otherwise.
  routes.get('/webhooks/deliveries', { summary: 'List the deliveries of a webhook, one page at a time (extension)', response: lists('deliveries', ref('WebhookDelivery')), params: PAGING_PARAMS }, validate(webhookIdRule()), async (req, res) => {
    const paging = pagingOf(req) ?? { page: 1, perPage: 100 };
    sendSuccess(res, listMessage('deliveries', await outgoingWebhooks.deliveries(ctxOf(req), webhookIdOf(req), paging)));
  });
}
