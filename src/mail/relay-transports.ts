import type { RelayKind } from '../lib/constants';
import { wasHandedOver } from './hand-over';
import { mailgun } from './relays/mailgun';
import { postmark } from './relays/postmark';
import { sendgrid } from './relays/sendgrid';
import { ses } from './relays/ses';
import { checkRelayHost, isPolicyRefusal, RelayContext, RelayFailure, RelaySettings, RelayTransport, RelayTransportOptions } from './relays/shared';
import { classifySmtpError, smtpTransport } from './relays/smtp';
import { unconfirmedText, wholeSentences } from './transport';

// The one door to the relays: each provider lives in its own file under relays/, what they share in relays/shared.ts.
export { checkRelayHost, fromDomain, isPolicyRefusal } from './relays/shared';
export type { RelayFailure, RelaySendResult, RelaySettings, RelayTransport, RelayTransportOptions } from './relays/shared';

/** The providers reached through their APIs, by relay kind. */
const PROVIDERS = { ses, sendgrid, postmark, mailgun } as const;

/** The provider's own base URLs (`endpoint` replaces them); none for SMTP. */
export function defaultEndpoint(kind: RelayKind, region: string | null): string | null {
  return kind === 'smtp' ? null : PROVIDERS[kind].endpoint(region);
}

/** The host a relay connects to (its SMTP server or its API). */
export function relayHost(settings: Pick<RelaySettings, 'kind' | 'url' | 'endpoint' | 'region'>): string {
  const url = settings.kind === 'smtp' ? settings.url : settings.endpoint || defaultEndpoint(settings.kind, settings.region);
  return url ? new URL(url).hostname : '';
}

/**
 * A relay's transport: SMTP through a nodemailer pool, or the provider's API through its own
 * SDK (loaded on first use: they are heavy and most processes never need them). The host is
 * checked against the private-address rule before the first connection and on verify.
 */
export function createRelayTransport(settings: RelaySettings, options: RelayTransportOptions): RelayTransport {
  const host = relayHost(settings);
  let checked: Promise<void> | undefined;
  const relay: RelayContext = {
    settings,
    options,
    endpoint: settings.endpoint || defaultEndpoint(settings.kind, settings.region) || '',
    key: settings.apiKey ?? '',
    checkOnce() {
      checked ??= checkRelayHost(host, options.allowPrivate).catch((err) => {
        checked = undefined;
        throw err;
      });
      return checked;
    },
    checkNow: () => checkRelayHost(host, options.allowPrivate),
  };
  return settings.kind === 'smtp' ? smtpTransport(relay) : PROVIDERS[settings.kind].transport(relay);
}

/** Classifies an error of a relay's send (or of the instance's SMTP transport, kind `smtp`). */
export function classifyRelayError(kind: RelayKind, err: unknown): RelayFailure {
  const e = (err ?? {}) as Record<string, any>;
  const provider = kind === 'smtp' ? undefined : PROVIDERS[kind];
  // Handed over whole and then no answer at all (reset, closed, timed out): the relay may have
  // taken the message (classifySendError says so for SMTP). An answer, even a refusal, says it did not.
  if (provider && wasHandedOver(err) && provider.errorOf(e).status === null) {
    return { relayDown: true, outcome: 'unconfirmed', code: null, message: unconfirmedText(kind, provider.errorOf(e).text) };
  }
  if (e.code === 'EPRIVATE' || e.code === 'EDNS') return { relayDown: true, outcome: 'retry', code: null, message: String(e.message) };
  if (!provider) return classifySmtpError(err);
  const { status, text, errorCode } = provider.errorOf(e);
  const message = wholeSentences(`${kind}${status ? ` ${status}` : ''}: ${text}`);
  if (status === null || status >= 500 || status === 429 || status === 401) return { relayDown: true, outcome: 'retry', code: status, message };
  if (isPolicyRefusal(text) || provider.refusesSender(status, errorCode)) return { relayDown: false, outcome: 'policy', code: status, message };
  if (provider.refusesAddress?.(status, errorCode)) return { relayDown: false, outcome: 'bounce', code: status, message };
  return { relayDown: false, outcome: 'failed', code: status, message };
}
