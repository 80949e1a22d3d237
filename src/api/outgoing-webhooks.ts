import { sendSuccess } from '../lib/envelope';
import { validate } from '../http/validation';
import { ctxOf } from '../http/context';
import { listMessage, pagingOf } from '../http/paging';
import { rotateSecretOf, rotateSecretRule, webhookIdOf, webhookIdRule, webhookInputOf, webhookRules } from '../http/inputs/outgoing-webhooks';
import type { Services } from '../services';
import { deleteById } from './crud';
import { ApiRoutes } from './routes';

/**
 * Extension (issue 13, point 5): outgoing webhooks, under the API prefix (/api/v1/webhooks…).
 * The provider webhooks coming in (POST /webhooks/ses, …) are another router, outside the prefix.
 */
export function mountOutgoingWebhooks(routes: ApiRoutes, { outgoingWebhooks }: Services): void {
  routes.get('/webhooks', async (req, res) => {
    sendSuccess(res, listMessage('webhooks', await outgoingWebhooks.list(ctxOf(req), pagingOf(req))));
  });

  routes.post('/webhooks/save', validate(...webhookRules()), async (req, res) => {
    sendSuccess(res, { webhook: await outgoingWebhooks.save(ctxOf(req), webhookInputOf(req)) });
  });

  routes.post('/webhooks/update', validate(webhookIdRule(), ...webhookRules(), rotateSecretRule()), async (req, res) => {
    sendSuccess(res, { webhook: await outgoingWebhooks.update(ctxOf(req), webhookIdOf(req), webhookInputOf(req), rotateSecretOf(req)) });
  });

  deleteById(routes, '/webhooks/delete', 'id', outgoingWebhooks.remove);

  // Always paged (a send's log has a row per message): page 1 of 100 unless asked otherwise.
  routes.get('/webhooks/deliveries', validate(webhookIdRule()), async (req, res) => {
    const paging = pagingOf(req) ?? { page: 1, perPage: 100 };
    sendSuccess(res, listMessage('deliveries', await outgoingWebhooks.deliveries(ctxOf(req), webhookIdOf(req), paging)));
  });
}
