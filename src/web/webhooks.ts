import type { NextFunction, Request, Response } from 'express';
import { ctxOf } from '../http/context';
import { rotateSecretOf, webhookInputOf, webhookRules } from '../http/inputs/outgoing-webhooks';
import { validate } from '../http/validation';
import { HOOK_EVENTS } from '../lib/constants';
import { asArray, toId } from '../lib/http';
import type { Services } from '../services';
import { onInvalid } from './errors';
import { pagerOf, pagingOf } from './paging';
import type { WebRoutes } from './routes';
import type { Views } from './views';

const LOG = { 'webhook-deliveries': 'webhooks/macros.njk#deliveries' } as const;

/** The events in plain words, for the checkboxes. */
const EVENT_LABELS: Record<(typeof HOOK_EVENTS)[number], string> = {
  'message.delivered': 'A message was accepted by the recipient’s mail server',
  'message.bounced': 'A message bounced',
  'message.opened': 'A message was opened (the first time)',
  'message.clicked': 'A link in a message was clicked (the first time for each link)',
  'message.complained': 'A recipient marked a message as spam',
  'contact.unsubscribed': 'A recipient unsubscribed',
  'contact.created': 'A contact was added',
  'single_send.started': 'A single send started',
  'single_send.completed': 'A single send completed',
  'automation.live': 'An automation went live',
  'automation.paused': 'An automation was paused',
  'import.finished': 'A contact import finished',
};
const EVENTS = HOOK_EVENTS.map((value) => ({ value, label: EVENT_LABELS[value] }));

/** Checkboxes post one value as text and several as a list: always a list for the shared rules. */
function eventsAsList(req: Request, _res: Response, next: NextFunction): void {
  if (req.body && req.body.events !== undefined) req.body.events = asArray(req.body.events);
  next();
}

/**
 * Outgoing webhooks: the endpoints, each with its delivery log and a
 * "Send again" per delivery. The same service and rules as `/api/v1/webhooks/*`. The signing
 * secret is shown on the page that answers the save (or the rotation), and never again.
 */
export function mountWebhooks(routes: WebRoutes, { outgoingWebhooks }: Services, views: Views): void {
  const idOf = (req: Request) => toId(req.params.id) ?? 0;
  const listData = async (req: Request) => {
    const result = await outgoingWebhooks.list(ctxOf(req), pagingOf(req));
    return { title: 'Webhooks', rows: result.rows, pager: pagerOf(req, result, '/webhook-endpoints'), events: EVENTS, values: { events: [] } };
  };
  const showData = async (req: Request) => {
    const ctx = ctxOf(req);
    const hook = await outgoingWebhooks.get(ctx, idOf(req));
    const [log, counts] = await Promise.all([outgoingWebhooks.deliveries(ctx, hook.id, pagingOf(req)), outgoingWebhooks.deliveryCounts(ctx, hook.id)]);
    return { title: hook.description || hook.url, hook, rows: log.rows, counts, pager: pagerOf(req, log, `/webhook-endpoints/${hook.id}`), events: EVENTS, values: hook };
  };
  const showPage = async (req: Request, res: Response) => views.page(req, res, 'webhooks/show.njk', await showData(req), { fragments: LOG });

  routes.get('/webhook-endpoints', async (req, res) => views.page(req, res, 'webhooks/index.njk', await listData(req)));

  routes.post('/webhook-endpoints', eventsAsList, onInvalid('webhooks/index.njk', listData), validate(...webhookRules()), async (req, res) => {
    const hook = await outgoingWebhooks.save(ctxOf(req), webhookInputOf(req));
    views.page(req, res, 'webhooks/secret.njk', { title: 'Webhook added', hook, secret: hook.secret, added: true });
  });

  routes.get('/webhook-endpoints/:id', showPage);

  routes.post('/webhook-endpoints/:id', eventsAsList, onInvalid('webhooks/show.njk', showData), validate(...webhookRules()), async (req, res) => {
    const hook = await outgoingWebhooks.update(ctxOf(req), idOf(req), webhookInputOf(req), rotateSecretOf(req));
    if (hook.secret) return views.page(req, res, 'webhooks/secret.njk', { title: 'New signing secret', hook, secret: hook.secret, added: false });
    views.redirect(res, `/webhook-endpoints/${hook.id}`, 'Webhook saved.');
  });

  routes.post('/webhook-endpoints/:id/delete', async (req, res) => {
    await outgoingWebhooks.remove(ctxOf(req), [idOf(req)]);
    views.redirect(res, '/webhook-endpoints', 'Webhook deleted. Its events that were waiting will not be sent.');
  });

  routes.post('/webhook-endpoints/:id/deliveries/:delivery/replay', async (req, res) => {
    const ctx = ctxOf(req);
    const hook = await outgoingWebhooks.get(ctx, idOf(req));
    await outgoingWebhooks.replay(ctx, hook.id, toId(req.params.delivery) ?? 0);
    await views.changed(req, res, `/webhook-endpoints/${hook.id}`, 'The event will be sent again in a moment.', () => showPage(req, res));
  });
}
