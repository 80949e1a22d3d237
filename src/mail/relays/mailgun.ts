import { lazy } from '../../lib/lazy';
import { ApiProvider, fromDomain, httpStatus, overHttp, rawBuilder } from './shared';

const mailgunSdk = lazy(() => require('mailgun.js') as typeof import('mailgun.js').default);

/** Mailgun: the message as raw MIME, signed here, sent through the From address's domain. */
export const mailgun: ApiProvider = {
  endpoint: (region) => (region === 'eu' ? 'https://api.eu.mailgun.net' : 'https://api.mailgun.net'),

  transport({ options, endpoint, key, checkOnce, checkNow }) {
    const raw = rawBuilder(options.dkim);
    const client = lazy(() => new (mailgunSdk())(FormData).client({ username: 'api', key, url: endpoint.replace(/\/+$/, ''), timeout: 60_000 }));
    return {
      async send(message) {
        await checkOnce();
        const data = await raw(message);
        const out = await overHttp(() => client().messages.create(fromDomain(message.from), { to: [message.to], message: data }));
        return { providerMessageId: out.id ?? null, response: `mailgun ${out.message ?? ''}` };
      },
      async verify() {
        await checkNow();
        await client().domains.list();
      },
      close: () => undefined,
    };
  },

  errorOf(e) {
    // mailgun.js answers a request that got no response (refused, reset, timed out) as a 400
    // whose message is the socket's error code.
    const noResponse = /^(E[A-Z_]+|ERR_[A-Z_]+)$/.test(String(e.message ?? ''));
    return { status: noResponse ? null : httpStatus(e.status), text: [e.message, e.details].filter(Boolean).join(': ') || String(e), errorCode: null };
  },

  refusesSender: (status) => status === 403,
};
