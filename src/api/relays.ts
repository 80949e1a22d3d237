import { sendSuccess } from '../lib/envelope';
import { validate } from '../http/validation';
import { ctxOf } from '../http/context';
import { listMessage, PAGING_PARAMS, pagingOf } from '../http/paging';
import { relayIdOf, relayIdRule, relayInputOf, relayRules } from '../http/inputs/relays';
import type { Services } from '../services';
import { deleteById } from './crud';
import { holds, lists, ref } from './describe';
import { nullable, object, str } from './schema-words';
import { ApiRoutes } from './routes';

/** Extension: an account's relays (SMTP servers and provider APIs its mail leaves through). */
export function mountRelays(routes: ApiRoutes, { relays }: Services): void {
  routes.get('/relays', { summary: 'List relays (extension)', response: lists('relays', ref('Relay')), params: PAGING_PARAMS }, async (req, res) => {
    sendSuccess(res, listMessage('relays', await relays.list(ctxOf(req), pagingOf(req))));
  });

  routes.post('/relays/save', { summary: 'Add a relay (extension; its password or API key is never shown again)', response: holds({ relay: ref('Relay') }) }, validate(...relayRules()), async (req, res) => {
    sendSuccess(res, { relay: await relays.save(ctxOf(req), relayInputOf(req)) });
  });

  routes.post('/relays/update', { summary: 'Change a relay (extension; without a new password or API key the stored one stays)', response: holds({ relay: ref('Relay') }) }, validate(relayIdRule(), ...relayRules()), async (req, res) => {
    sendSuccess(res, { relay: await relays.update(ctxOf(req), relayIdOf(req), relayInputOf(req)) });
  });

  deleteById(routes, '/relays/delete', 'id', relays.remove, 'Delete a relay (extension)');

  routes.post('/relays/test', { summary: 'Connect to a relay and authenticate, sending nothing (extension)', response: holds({ test: object({ ok: { type: 'boolean' }, error: nullable(str) }) }) }, validate(relayIdRule()), async (req, res) => {
    sendSuccess(res, { test: await relays.test(ctxOf(req), relayIdOf(req)) });
  });
}
