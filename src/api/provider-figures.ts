import { sendSuccess } from '../lib/envelope';
import { validate } from '../http/validation';
import { ctxOf } from '../http/context';
import { utrField, utrOf } from '../http/campaign-params';
import { domainIdOf, domainIdRule } from '../http/inputs/sending-domains';
import { providerDaysOf, providerDaysRule } from '../http/inputs/provider-figures';
import type { Services } from '../services';
import { holds, ref } from './describe';
import { arrayOf } from './schema-words';
import { ApiRoutes } from './routes';

const FIGURES = 'Per mailbox provider (by the MX hosts of each recipient\'s domain, as known when read): messages sent, delivered, deferred at least once, bounced, complained, opened by a person and clicked, with the most frequent deferral codes.';

/** Extension: how each mailbox provider treated a single send's messages. */
export function mountSendProviders(routes: ApiRoutes, { providerFigures }: Services): void {
  routes.get('/single-send/providers', { summary: 'Show a single send\'s figures per mailbox provider (extension)', description: FIGURES, response: holds({ providers: arrayOf(ref('ProviderFigures')) }) }, validate(utrField()), async (req, res) => {
    sendSuccess(res, { providers: await providerFigures.ofSingleSend(ctxOf(req), utrOf(req)) });
  });
}

/** Extension: the same for every email of an automation. */
export function mountAutomationProviders(routes: ApiRoutes, { providerFigures }: Services): void {
  routes.get('/automations/providers', { summary: 'Show an automation\'s figures per mailbox provider (extension)', description: FIGURES, response: holds({ providers: arrayOf(ref('ProviderFigures')) }) }, validate(utrField()), async (req, res) => {
    sendSuccess(res, { providers: await providerFigures.ofAutomation(ctxOf(req), utrOf(req)) });
  });
}

/** Extension: the same for the mail sent from a sending domain, per UTC day. */
export function mountDomainProviders(routes: ApiRoutes, { providerFigures }: Services): void {
  routes.get('/domains/providers', { summary: 'Show a sending domain\'s figures per mailbox provider and day (extension)', description: `${FIGURES} One entry per day and provider, oldest day first.`, response: holds({ providers: arrayOf(ref('ProviderDay')) }) }, validate(domainIdRule(), providerDaysRule()), async (req, res) => {
    sendSuccess(res, { providers: await providerFigures.ofSendingDomain(ctxOf(req), domainIdOf(req), providerDaysOf(req)) });
  });
}
