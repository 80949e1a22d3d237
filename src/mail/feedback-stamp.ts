import { createBounceTokens, MESSAGE_HEADER, verpAddress } from '../lib/verp';
import type { OutgoingMessage } from './outgoing-message';

/** The key under which providers that echo custom values back in their webhooks return the token. */
export const ECHO_KEY = 'campaign_message';

/**
 * Headers asking the relay (when it is SendGrid, Mailgun or Postmark) to echo the token in its
 * webhook events; those providers strip them. SES echoes every header by itself.
 */
function echoHeaders(smtpUrl: string | undefined, token: string): Record<string, string> {
  let host = '';
  try {
    host = smtpUrl ? new URL(smtpUrl).hostname.toLowerCase() : '';
  } catch {
    host = '';
  }
  if (host.endsWith('sendgrid.net')) return { 'X-SMTPAPI': JSON.stringify({ unique_args: { [ECHO_KEY]: token } }) };
  if (host.endsWith('mailgun.org')) return { 'X-Mailgun-Variables': JSON.stringify({ [ECHO_KEY]: token }) };
  if (host.endsWith('postmarkapp.com')) return { [`X-PM-Metadata-${ECHO_KEY}`]: token };
  return {};
}

/**
 * Marks a message so that what comes back about it (a DSN, a complaint, a provider's event)
 * names its ledger row: the `X-Campaign-Message` header always, and with BOUNCE_DOMAIN the VERP
 * envelope sender `bounces+<token>@BOUNCE_DOMAIN`, or `@bounces.<sending domain>` when that
 * subdomain is a CNAME of BOUNCE_DOMAIN (the From header stays the sender's).
 */
export function feedbackStamp(secret: string, bounceDomain: string | undefined, smtpUrl?: string) {
  const tokens = createBounceTokens(secret);
  return (message: OutgoingMessage, ledgerId: number): OutgoingMessage => {
    const token = tokens.sign(ledgerId);
    return {
      ...message,
      headers: { ...message.headers, [MESSAGE_HEADER]: token, ...echoHeaders(smtpUrl, token) },
      // The envelope names every recipient: its copies too, or they would never be delivered.
      ...(bounceDomain ? { envelope: { from: verpAddress(token, message.returnPathDomain ?? bounceDomain), to: [message.to, ...(message.cc ?? []), ...(message.bcc ?? [])].join(', ') } } : {}),
    };
  };
}
