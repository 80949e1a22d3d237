import { lazy } from '../../lib/lazy';
import { ApiProvider, httpStatus, jsonExtras, jsonParts, overHttp } from './shared';

const postmarkSdk = lazy(() => require('postmark') as typeof import('postmark'));

/** Postmark: the message's parts as JSON in the broadcast stream, the feedback token as metadata. */
export const postmark: ApiProvider = {
  endpoint: () => 'https://api.postmarkapp.com',

  transport({ endpoint, key, checkOnce, checkNow }) {
    const base = new URL(endpoint);
    const client = lazy(() => new (postmarkSdk().ServerClient)(key, { useHttps: base.protocol === 'https:', requestHost: base.host, timeout: 60 }));
    return {
      async send(message) {
        await checkOnce();
        const p = jsonParts(message);
        const x = jsonExtras(message);
        const out = await overHttp(() => client().sendEmail({
          From: p.from,
          To: message.to,
          ...(x.cc.length ? { Cc: x.cc.join(', ') } : {}),
          ...(x.bcc.length ? { Bcc: x.bcc.join(', ') } : {}),
          ...(message.replyTo ? { ReplyTo: message.replyTo } : {}),
          Subject: message.subject,
          HtmlBody: p.html,
          ...(p.text ? { TextBody: p.text } : {}),
          Headers: Object.entries(p.headers).map(([Name, Value]) => ({ Name, Value })),
          ...(x.attachments.length ? { Attachments: x.attachments.map((a) => ({ Name: a.filename, Content: a.content, ContentType: a.type, ContentID: null })) } : {}),
          ...(p.token ? { Metadata: { campaign_message: p.token } } : {}),
          // Campaigns belong in Postmark's broadcast stream, which every server has.
          MessageStream: 'broadcast',
        }));
        return { providerMessageId: out.MessageID ?? null, response: `postmark ${out.Message ?? ''}` };
      },
      async verify() {
        await checkNow();
        await client().getServer();
      },
      close: () => undefined,
    };
  },

  errorOf: (e) => ({ status: httpStatus(e.statusCode), text: String(e.message ?? e), errorCode: typeof e.code === 'number' ? e.code : null }),

  /** The sender-signature and account-approval codes. */
  refusesSender: (_status, errorCode) => errorCode === 400 || errorCode === 401 || errorCode === 412,

  /** 406: the recipient is inactive (bounced or complained before) on Postmark's side. */
  refusesAddress: (_status, errorCode) => errorCode === 406,
};
