import { lazy } from '../../lib/lazy';
import { ApiProvider, httpStatus, overHttp, rawBuilder } from './shared';

const sesSdk = lazy(() => require('@aws-sdk/client-sesv2') as typeof import('@aws-sdk/client-sesv2'));

/** Amazon SES (v2 API): the message as raw MIME, signed here; the key is `ACCESS_KEY_ID:SECRET_ACCESS_KEY`. */
export const ses: ApiProvider = {
  endpoint: (region) => `https://email.${region || 'us-east-1'}.amazonaws.com`,

  transport({ settings, options, endpoint, key, checkOnce, checkNow }) {
    const raw = rawBuilder(options.dkim);
    const client = lazy(() => {
      const split = key.indexOf(':');
      return new (sesSdk().SESv2Client)({
        region: settings.region || 'us-east-1',
        endpoint,
        credentials: { accessKeyId: key.slice(0, Math.max(0, split)), secretAccessKey: key.slice(split + 1) },
        // Failover and retries are the worker's: one attempt per call.
        maxAttempts: 1,
      });
    });
    return {
      async send(message) {
        await checkOnce();
        const sdk = sesSdk();
        const data = await raw(message);
        const out = await overHttp(() => client().send(new sdk.SendEmailCommand({ Destination: { ToAddresses: [message.to] }, Content: { Raw: { Data: data } } })));
        return { providerMessageId: out.MessageId ?? null, response: `ses ${out.MessageId ?? ''}` };
      },
      async verify() {
        await checkNow();
        await client().send(new (sesSdk().GetAccountCommand)({}));
      },
      close: () => undefined,
    };
  },

  errorOf: (e) => ({ status: httpStatus(e.$metadata?.httpStatusCode), text: `${e.name ?? 'Error'}: ${e.message ?? ''}`, errorCode: e.name ?? null }),

  /** MessageRejected, and the unverified-domain and paused-account errors. */
  refusesSender: (_status, errorCode) => ['MessageRejected', 'MailFromDomainNotVerifiedException', 'AccountSuspendedException', 'SendingPausedException'].includes(String(errorCode)),
};

