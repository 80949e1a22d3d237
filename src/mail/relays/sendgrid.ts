import { lazy } from '../../lib/lazy';
import type { OutgoingMessage } from '../outgoing-message';
import { ApiProvider, httpStatus, jsonExtras, jsonParts, overHttp } from './shared';

// Both packages export a default instance with the class beside it.
const sendgridMail = lazy(() => require('@sendgrid/mail') as { MailService: new () => import('@sendgrid/mail').MailService });
const sendgridClient = lazy(() => require('@sendgrid/client') as { Client: new () => import('@sendgrid/client').Client });

/**
 * The From as SendGrid's v3 API takes it, `{ email, name }`: its library splits a string at `<`
 * and keeps the quotes of a quoted name, which recipients would then see.
 */
function sendgridFrom(from: OutgoingMessage['from']): string | { email: string; name?: string } {
  if (typeof from === 'string') return from;
  return { email: from.address, ...(from.name ? { name: from.name } : {}) };
}

/** SendGrid (v3 mail send): the message's parts as JSON, the feedback token as a custom argument. */
export const sendgrid: ApiProvider = {
  endpoint: () => 'https://api.sendgrid.com',

  transport({ endpoint, key, checkOnce, checkNow }) {
    const mail = lazy(() => {
      const client = new (sendgridClient().Client)();
      client.setApiKey(key);
      client.setDefaultRequest('baseUrl', endpoint);
      client.setDefaultRequest('timeout' as never, 60_000 as never);
      const service = new (sendgridMail().MailService)();
      service.setClient(client);
      return { service, client };
    });
    return {
      async send(message) {
        await checkOnce();
        const p = jsonParts(message);
        const x = jsonExtras(message);
        const [response] = await overHttp(() => mail().service.send({
          from: sendgridFrom(message.from),
          // The library puts `to`, `cc` and `bcc` in one personalization.
          to: message.to,
          ...(x.cc.length ? { cc: x.cc } : {}),
          ...(x.bcc.length ? { bcc: x.bcc } : {}),
          ...(message.replyTo ? { replyTo: message.replyTo } : {}),
          subject: message.subject,
          html: p.html,
          ...(p.text ? { text: p.text } : {}),
          headers: p.headers,
          ...(x.attachments.length ? { attachments: x.attachments.map((a) => ({ content: a.content, filename: a.filename, type: a.type, disposition: 'attachment' })) } : {}),
          ...(p.token ? { customArgs: { campaign_message: p.token } } : {}),
        }));
        const id = response.headers?.['x-message-id'];
        return { providerMessageId: id ? String(id) : null, response: `sendgrid ${response.statusCode}` };
      },
      async verify() {
        await checkNow();
        await mail().client.request({ method: 'GET', url: '/v3/scopes' });
      },
      close: () => undefined,
    };
  },

  errorOf(e) {
    const errors = e.response?.body?.errors;
    const text = Array.isArray(errors) && errors.length ? errors.map((x: any) => x?.message).join('; ') : String(e.message ?? e);
    return { status: httpStatus(e.code), text, errorCode: null };
  },

  refusesSender: (status) => status === 403,
};
